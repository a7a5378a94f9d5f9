/**
 * Shared types and primitives: errors and exit codes, the canonical event
 * model, view settings, and time-sortable ids.
 *
 * @module
 */

export {
  EnvironmentError,
  type ErrorDetailOptions,
  errorText,
  ExitCode,
  LinkRefusedError,
  type LinkRefusedOptions,
  NotFoundError,
  PromptRunnerError,
  type PromptRunnerErrorOptions,
  RunLostError,
  StateError,
  UsageError,
} from "./errors.ts";
export {
  type AttemptMode,
  ATTENTION_REASONS,
  type AttentionReason,
  type EventData,
  type EventDataMap,
  type EventType,
  type FailureData,
  type PromptEndData,
  PROVIDER_EVENT_TYPES,
  type ProviderErrorData,
  type ProviderEvent,
  type ProviderEventOf,
  type ProviderEventType,
  RUN_STATUSES,
  type RunEvent,
  type RunEventOf,
  RUNNER_EVENT_TYPES,
  type RunnerEventType,
  type RunStatus,
  type ToolResultData,
  type VerificationItemData,
} from "./events.ts";
export {
  DEFAULT_VIEW,
  parseViewSettings,
  VIEW_KEYS,
  VIEW_OPTIONS,
  type ViewKey,
  type ViewSettings,
} from "./view.ts";
export { checkRunId, ID_PATTERN, newId, RUN_ID_PATTERN } from "./new_id.ts";
export type {
  AttentionCommand,
  BoundaryCommand,
  LinkRefusal,
  PromptStartInfo,
  RunHooks,
  RunOpened,
  RunOpenInfo,
  SetViewCommand,
  SteerCommand,
  SteerResult,
} from "./run_hooks.ts";
export { readRunLock, type RunLockInfo } from "./run_lock.ts";
export {
  NOTIFY_ON,
  type NotifyCommandRule,
  type NotifyOn,
  type NotifyRule,
  type NotifyRuleBase,
  type NotifyWebhookRule,
} from "./notify_rule.ts";
export { isDirectory, pathExists } from "./files.ts";
export { isRecord } from "./is_record.ts";
export {
  type Attention,
  type BudgetSpending,
  type Snapshot,
  SNAPSHOT_FIELDS,
  type SnapshotField,
} from "./snapshot_schema.ts";
export {
  onStopSignals,
  stopExitCode,
  type StopSignal,
} from "./stop_signals.ts";
