/**
 * prompt_runner runs packets of prompts against coding agents, verifies each
 * result against a deterministic contract, and lets other processes watch and
 * steer a live run through files in its state root.
 *
 * ```ts
 * import { runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_hello.prompt.md`,
 *   "---\nverify: {files_exist: [HELLO.md]}\nsimulate: {attempts: [{writes: [{path: HELLO.md, text: hi}]}]}\n---\nSay hello.\n",
 * );
 * const result = await runPacket(dir, { stateRoot: null });
 * assert.equal(result.status, "completed");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

// Running a packet.
export {
  type OpenPlane,
  type PromptOutcome,
  type RunOutput,
  runPacket,
  type RunPacketOptions,
  type RunResult,
} from "./lib/runner/mod.ts";
export type { PromptStatus, VerifierCounts } from "./lib/status/mod.ts";

// Watching a run.
export {
  currentRun,
  type CurrentRunOptions,
  type EventLine,
  events,
  type EventsFrom,
  type EventsOptions,
  followLog,
  type FollowLogOptions,
  log,
  type LogEntry,
  type Outcome,
  type RunRef,
  type Snapshot,
  snapshot,
} from "./lib/control/mod.ts";

// Verifying a state root's audit trail (`control log --verify`).
export {
  type ChainedFile,
  type LogFinding,
  type LogFindingKind,
  type LogVerification,
  verifyLog,
} from "./lib/control/mod.ts";

// The transport a run is reached through (its state root's files by default).
export {
  fileTransport,
  newRequest,
  type RequestDraft,
  type Transport,
  type TransportName,
} from "./lib/control/mod.ts";

// Steering a run.
export {
  type ControlRequest,
  defaultAuthor,
  type RequestOptions,
  type RequestOutcome,
  requestOutcome,
  type SentRequest,
  setView,
  steer,
  type SteerOptions,
  waitForOutcome,
  type WaitOptions,
  type WaitResult,
} from "./lib/control/mod.ts";

// Its contract.
export {
  amend,
  type AmendmentChange,
  type AmendmentOptions,
  type AmendOptions,
  type AmendTarget,
  contract,
  type ContractDiffEntry,
  type ContractTarget,
  type ContractTransport,
  type ContractView,
  contractViewOf,
  fileContracts,
  relax,
  type RelaxOptions,
} from "./lib/contract/mod.ts";
export type { AmendmentPhase, AmendmentRecord } from "./lib/control/mod.ts";
export type {
  AgentOptions,
  Budget,
  BudgetKey,
  CommandEntry,
  ContainsEntry,
  Contract,
  MatchesEntry,
  Packet,
  PathEntry,
  PromptSpec,
  RecoveryConfig,
  RepoConfig,
} from "./lib/packet/mod.ts";
export { BUDGET_KEYS } from "./lib/packet/mod.ts";
export type { EnforcedContract } from "./lib/contract/mod.ts";

// Events, views, and the hooks a run reports to.
export {
  type AttemptMode,
  type Attention,
  ATTENTION_REASONS,
  type AttentionCommand,
  type AttentionReason,
  type BoundaryCommand,
  type BudgetSpending,
  type EventData,
  type EventDataMap,
  type EventType,
  type FailureData,
  type LinkRefusal,
  NOTIFY_ON,
  type NotifyCommandRule,
  type NotifyOn,
  type NotifyRule,
  type NotifyRuleBase,
  type NotifyWebhookRule,
  type PromptEndData,
  type PromptStartInfo,
  PROVIDER_EVENT_TYPES,
  type ProviderErrorData,
  type ProviderEvent,
  type ProviderEventOf,
  type ProviderEventType,
  type RunEvent,
  type RunEventOf,
  type RunHooks,
  RUNNER_EVENT_TYPES,
  type RunnerEventType,
  type RunOpened,
  type RunOpenInfo,
  type RunStatus,
  type SetViewCommand,
  type SteerCommand,
  type SteerResult,
  type ToolResultData,
  type VerificationItemData,
  VIEW_OPTIONS,
  type ViewKey,
  type ViewSettings,
} from "./lib/shared/mod.ts";

// Rendering events as the CLI does (the dashboard shows the studio view).
export {
  createRenderer,
  type CreateRendererOptions,
  type OpenToolCall,
  type RenderContext,
  type Renderer,
  type RenderHandover,
  terminalSafe,
  type TerminalSafeOptions,
} from "./lib/render/mod.ts";

// Errors, exit codes and the signals that stop a command.
export {
  EnvironmentError,
  errorText,
  ExitCode,
  LinkRefusedError,
  NotFoundError,
  onStopSignals,
  PromptRunnerError,
  RunLostError,
  StateError,
  stopExitCode,
  type StopSignal,
  UsageError,
} from "./lib/shared/mod.ts";

// Finding runs and where they stand (`prompt_runner serve`, dashboards).
export {
  listWorkspaces,
  locateTarget,
  type LocateTargetOptions,
  type StateHomeOptions,
  type TargetLocation,
  type WorkspaceEntry,
} from "./lib/workspace/mod.ts";
export {
  type LastAmendment,
  type LastSteer,
  type RunWord,
  type StatusLocation,
  statusOf,
  type StatusOfOptions,
  type StatusRollup,
  type UnmetItem,
} from "./lib/status/mod.ts";
export {
  currentSnapshot,
  eventByteBatches,
  eventLineBatches,
  eventTextBatches,
} from "./lib/control/mod.ts";
export { CLAUSES, loadPacket } from "./lib/packet/mod.ts";

// Fleets: runs on many machines, watched and steered through NATS JetStream.
export {
  fleetAddress,
  type FleetClient,
  type FleetClientOptions,
  type FleetPromptStatus,
  type FleetRun,
  type FleetRunName,
  type FleetRunState,
  type FleetStatus,
  type FleetTransport,
  type FleetTransportOptions,
  type FleetUrl,
  maskFleetSecrets,
  openFleetClient,
  parseFleetUrl,
  rootName,
} from "./lib/fleet/mod.ts";
export { DEFAULT_VIEW } from "./lib/shared/mod.ts";
