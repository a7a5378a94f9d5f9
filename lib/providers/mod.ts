/**
 * Providers: the agent adapter interface, the simulated provider, and
 * failure classification.
 *
 * @module
 */

export type {
  Provider,
  ResumeCause,
  ResumeRequest,
  Session,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";
export { AVAILABLE_PROVIDERS, getProvider } from "./get_provider.ts";
export { classifyFailure, type FailureEnvelope } from "./failure.ts";
