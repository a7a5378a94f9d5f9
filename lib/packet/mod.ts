/**
 * Packets: the manifest, prompts, verify contracts and recovery settings.
 *
 * @module
 */

export { loadPacket } from "./load_packet.ts";
export {
  MANIFEST_FILE,
  type Packet,
  type PromptSpec,
  type RepoConfig,
} from "./packet.ts";
export { normalizePromptId } from "../shared/prompt_id.ts";
export {
  type Clause,
  CLAUSES,
  type CommandEntry,
  type ContainsEntry,
  type Contract,
  DEFAULT_COMMAND_TIMEOUT_MS,
  type MatchesEntry,
  type PathEntry,
} from "./contract.ts";
export { DEFAULT_RECOVERY, type RecoveryConfig } from "./recovery.ts";
export type { AgentOptions } from "./agent_options.ts";
export { type Budget, BUDGET_KEYS, type BudgetKey } from "./budget.ts";
