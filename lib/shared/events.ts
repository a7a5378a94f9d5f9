/**
 * The canonical event model: one event per line of a run's `events.jsonl`,
 * the same line `run --json` prints.
 *
 * @module
 */

import type { AttentionReason } from "./attention_reasons.ts";

export {
  ATTENTION_REASONS,
  type AttentionReason,
} from "./attention_reasons.ts";

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
  "attention_needed",
  "run_finished",
] as const;

const PROVIDER_TYPES: ReadonlySet<string> = new Set(PROVIDER_EVENT_TYPES);

/** Whether an event came from the agent (a provider event type). */
export function isProviderEvent(event: { type: string }): boolean {
  return PROVIDER_TYPES.has(event.type);
}

/** A provider event type. */
export type ProviderEventType = typeof PROVIDER_EVENT_TYPES[number];

/** A runner event type. */
export type RunnerEventType = typeof RUNNER_EVENT_TYPES[number];

/** Any canonical event type. */
export type EventType = ProviderEventType | RunnerEventType;

/** What a provider says went wrong (`error_occurred`, `run_failed`). */
export interface ProviderErrorData {
  /** The provider that failed. */
  provider: string;
  /** The failure kind (`provider_capacity`, `transport_timeout`, …). */
  kind: string;
  /** The provider's words. */
  message: string;
  /** An explicit recovery map (the simulated provider's `error.recovery`). */
  recovery?: unknown;
}

/** A tool call's result (`tool_call_completed`, `tool_call_failed`). */
export interface ToolResultData {
  /** The call it answers. */
  tool_call_id: string;
  /** The tool's name. */
  tool_name: string;
  /** What the tool returned. */
  tool_output: string;
  /** Whether the call failed. */
  is_error: boolean;
}

/** A failure that ends a turn (`error_occurred`, `run_failed`). */
export interface FailureData {
  /** A stable code: the failure kind, or `start_failed`. */
  error_code: string;
  /** The failure in words. */
  error_message: string;
  /** The provider's report, when the provider failed. */
  provider_error?: ProviderErrorData;
}

/** One verification item as `verification_finished` reports it. */
export interface VerificationItemData {
  /** The contract clause. */
  clause: string;
  /** A short label (a path, a command line). */
  label: string;
  /** The item's outcome (`pass`, `fail`, `fault`, …). */
  status: string;
  /** Why, in words. */
  reason: string;
}

/** How a prompt ended (`prompt_completed`, `prompt_failed`). */
export interface PromptEndData {
  /** The prompt. */
  prompt_id: string;
  /** How it ended (`completed`, `failed`, `blocked`, `interrupted`). */
  status: string;
  /** Why, in words (`null`: it completed). */
  reason: string | null;
  /** How many attempts it took (absent: blocked before any). */
  attempts?: number;
  /** The prompts it waited for in vain (blocked only). */
  blocked_by?: string[];
}

/**
 * Each event type's `data`, as the runner writes it (DESIGN §4). A reader
 * of another process's `events.jsonl` reads what that process wrote: it
 * still checks a field before it relies on it.
 */
export interface EventDataMap {
  /** A session began (or resumed): its ids and, for a CLI, its process. */
  run_started: {
    provider?: string;
    model?: string | null;
    session_id?: string | null;
    provider_session_id?: string | null;
    cli_version?: string | null;
    pid?: number;
    pid_start?: string | null;
    simulated?: boolean;
  };
  /** A piece of streamed text or thinking. */
  message_streamed: { delta: string; kind: "text" | "thinking" };
  /** A whole message. */
  message_received: { content: string; role: string };
  /** A tool call began. */
  tool_call_started: {
    tool_call_id: string;
    tool_name: string;
    tool_input: Record<string, unknown>;
  };
  /** A tool call succeeded. */
  tool_call_completed: ToolResultData;
  /** A tool call failed. */
  tool_call_failed: ToolResultData;
  /** Running token totals of the attempt, and its cost when reported. */
  token_usage_updated: {
    input_tokens: number;
    output_tokens: number;
    total_tokens: number;
    cost_usd?: number;
  };
  /** The turn ended well. */
  run_completed: {
    stop_reason: string;
    num_turns?: number;
    duration_ms?: number;
  };
  /** Something went wrong in the session. */
  error_occurred: FailureData;
  /** The turn ended in failure. */
  run_failed: FailureData;
  /** An interrupted (or orphaned) run goes on in this stream. */
  run_resumed: { after_seq: number; after: "interrupted" | "runner_gone" };
  /** An attempt began. */
  prompt_started: {
    prompt_id: string;
    name: string;
    attempt: number;
    mode: AttemptMode;
    provider: string;
    model: string | null;
  };
  /** A failed session was resumed. */
  session_resumed: {
    prompt_id: string;
    cause: "failure";
    failure_class: string;
    resume: number;
    limit: number;
  };
  /** An operator's steer reached the agent. */
  prompt_steered: {
    prompt_id: string;
    text: string;
    author: string;
    delivery: "send_input" | "interrupt_and_resume";
    request_id: string;
  };
  /** The contract was checked. */
  verification_finished: {
    prompt_id: string;
    passed: boolean;
    failures: number;
    faults: number;
    items: VerificationItemData[];
    error?: string;
  };
  /** Another attempt follows after a delay. */
  retry_scheduled: {
    prompt_id: string;
    failure_class: string;
    delay_ms: number;
    reason: string;
    next_attempt: number;
  };
  /** A prompt completed. */
  prompt_completed: PromptEndData;
  /** A prompt failed, was blocked or was interrupted. */
  prompt_failed: PromptEndData;
  /**
   * The run needs a person: a prompt failed for good, a verifier fault, a
   * refused permission, a spent steer or usage budget, or a stall.
   */
  attention_needed: {
    reason: AttentionReason;
    prompt_id: string | null;
    attempt: number | null;
    detail: string;
  };
  /** The run ended: the last line of every run. */
  run_finished: {
    status: RunStatus;
    reason: string | null;
    prompts: Record<string, string>;
  };
}

/**
 * The `data` of an event of type `T`: the fields its type declares, and any
 * other a newer writer added (read as `unknown`).
 */
export type EventData<T extends EventType = EventType> =
  & EventDataMap[T]
  & { [key: string]: unknown };

/** An event of one type as a provider emits it. */
export interface ProviderEventOf<T extends ProviderEventType> {
  /** The event type. */
  type: T;
  /** The event's payload. */
  data: EventData<T>;
}

/**
 * An event as a provider emits it, before the runner stamps it: a union
 * keyed by `type`, so checking the type narrows `data` to its shape.
 */
export type ProviderEvent = {
  [T in ProviderEventType]: ProviderEventOf<T>;
}[ProviderEventType];

/** A canonical event of one type, as stored in `events.jsonl`. */
export interface RunEventOf<T extends EventType> {
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
  type: T;
  /** The event's payload. */
  data: EventData<T>;
}

/**
 * A canonical event, as stored in `events.jsonl`: a union keyed by `type`,
 * so checking the type narrows `data` to its shape.
 */
export type RunEvent = { [T in EventType]: RunEventOf<T> }[EventType];

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
