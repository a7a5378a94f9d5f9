/**
 * The canonical event model: one event per line of a run's `events.jsonl`,
 * the same line `run --json` prints.
 *
 * @module
 */

/** Event types a provider session emits. */
export const PROVIDER_EVENT_TYPES = [
  "run_started",
  "message_streamed",
  "message_received",
  "tool_call_started",
  "tool_call_completed",
  "tool_call_failed",
  "token_usage_updated",
  "run_completed",
  "error_occurred",
  "run_failed",
] as const;

/** Event types the runner itself emits. */
export const RUNNER_EVENT_TYPES = [
  "run_resumed",
  "prompt_started",
  "session_resumed",
  "prompt_steered",
  "verification_finished",
  "retry_scheduled",
  "prompt_completed",
  "prompt_failed",
  "run_finished",
] as const;

/** A provider event type. */
export type ProviderEventType = typeof PROVIDER_EVENT_TYPES[number];

/** A runner event type. */
export type RunnerEventType = typeof RUNNER_EVENT_TYPES[number];

/** Any canonical event type. */
export type EventType = ProviderEventType | RunnerEventType;

/** An event as a provider emits it, before the runner stamps it. */
export interface ProviderEvent {
  /** The event type. */
  type: ProviderEventType;
  /** The event's payload; see DESIGN.md §4 for each type's fields. */
  data: Record<string, unknown>;
}

/** A canonical event, as stored in `events.jsonl`. */
export interface RunEvent {
  /** The schema version, always 1. */
  v: 1;
  /** The position of the event in its run, starting at 1. */
  seq: number;
  /** When the runner observed the event (ISO 8601, UTC). */
  at: string;
  /** The run the event belongs to. */
  run_id: string;
  /** The prompt the event belongs to, or `null` for run-level events. */
  prompt_id: string | null;
  /** The attempt of that prompt, or `null` for run-level events. */
  attempt: number | null;
  /** The event type. */
  type: EventType;
  /** The event's payload. */
  data: Record<string, unknown>;
}

/** How an attempt came about: the first `run`, a `retry`, or a `repair`. */
export type AttemptMode = "run" | "retry" | "repair";

/** How a run ended, as recorded by `run_finished`. */
export type RunStatus = "completed" | "failed" | "blocked" | "interrupted";

/** The final statuses a run can have. */
export const RUN_STATUSES: readonly RunStatus[] = [
  "completed",
  "failed",
  "blocked",
  "interrupted",
];
