/**
 * A run's `state.json`, as far as its events tell it: what a fleet client
 * has instead of the file (the fleet holds a run's events, not its state).
 * Each prompt the run touched gets its status, this run's attempts (mode,
 * how each ended, resumes, usage, verifier report) and its last verifier
 * report, as the runner records them. Only the runner's own events and the
 * provider events that count (sessions, usage, failures) are parsed: the
 * rest of a long run's lines are passed over unparsed.
 *
 * @module
 */

import type { ProviderEvent } from "../shared/events.ts";
import { isRecord } from "../shared/is_record.ts";
import {
  type AttemptRecord,
  type AttemptStatus,
  emptyState,
  type PromptState,
  type PromptStatus,
  settleDeadAttempts,
  startedAttempt,
  type StateFile,
} from "../status/state_file.ts";
import type { LastEvent } from "../status/status_types.ts";
import { UsageTally } from "../status/usage_tally.ts";

/** The lines worth parsing: a quick look before `JSON.parse`. */
const REPLAYED =
  /"type":"(?:prompt_started|prompt_completed|prompt_failed|verification_finished|retry_scheduled|session_resumed|run_resumed|run_started|token_usage_updated|error_occurred|run_failed)"/;

const MODES = ["run", "retry", "repair"] as const;
const PROMPT_STATUSES: readonly PromptStatus[] = [
  "running",
  "completed",
  "failed",
  "verification_failed",
  "verifier_fault",
  "retry_scheduled",
  "repairing",
  "blocked",
  "interrupted",
];
const ENDINGS: readonly AttemptStatus[] = [
  "completed",
  "failed",
  "verification_failed",
  "verifier_fault",
  "interrupted",
];

type Report = NonNullable<AttemptRecord["verifier"]>;

interface Event {
  type: string;
  seq: number;
  at: string;
  prompt_id: string | null;
  attempt: number | null;
  data: Record<string, unknown>;
}

function text(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function whole(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) ? value : null;
}

/** An event line as the runner writes it, or `null`. */
function parseEvent(line: string): Event | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (
    !isRecord(value) || typeof value.type !== "string" ||
    typeof value.at !== "string" || typeof value.run_id !== "string"
  ) {
    return null;
  }
  return {
    type: value.type,
    seq: whole(value.seq) ?? 0,
    at: value.at,
    prompt_id: text(value.prompt_id),
    attempt: whole(value.attempt),
    data: isRecord(value.data) ? value.data : {},
  };
}

/** The last event of a stream, read from its last line, or `null`. */
export function lastEventOf(line: string | null): LastEvent | null {
  if (line === null) return null;
  try {
    const value = JSON.parse(line);
    if (
      isRecord(value) && typeof value.at === "string" &&
      typeof value.type === "string" && typeof value.run_id === "string"
    ) {
      return {
        at: value.at,
        type: value.type,
        run_id: value.run_id,
        data: isRecord(value.data) ? value.data : {},
      };
    }
  } catch {
    // Not an event.
  }
  return null;
}

/** The verifier's report as `verification_finished` carries it. */
function reportOf(data: Record<string, unknown>): Report {
  const items = (Array.isArray(data.items) ? data.items : [])
    .filter(isRecord)
    .map((item) => ({
      clause: String(item.clause ?? "") as Report["items"][number]["clause"],
      label: String(item.label ?? ""),
      status:
        (["pass", "fail", "fault"].includes(String(item.status))
          ? item.status
          : "fault") as Report["items"][number]["status"],
      reason: String(item.reason ?? ""),
    }));
  const count = (status: string) =>
    items.filter((item) => item.status === status).length;
  return {
    passed: data.passed === true,
    items,
    failures: whole(data.failures) ?? count("fail"),
    faults: whole(data.faults) ?? count("fault"),
  };
}

/** Replays a run's event lines into the state its runner records. */
export class StateReplay {
  /** The state so far: the prompts this run touched. */
  readonly state: StateFile;
  readonly #runId: string;
  #lastSeq = 0;
  readonly #tallies = new Map<AttemptRecord, UsageTally>();
  /** Attempts whose session failed (a repair after one marks it failed). */
  readonly #sessionFailed = new Set<AttemptRecord>();

  /** A replay of the run `runId`'s events. */
  constructor(runId: string) {
    this.#runId = runId;
    this.state = { ...emptyState(), run_id: runId };
  }

  /** Folds one stored line in (a line of no interest costs one regex test). */
  line(line: string): void {
    if (!REPLAYED.test(line)) return;
    const event = parseEvent(line);
    // Each seq once: a line stored twice is replayed once.
    if (event === null || event.seq <= this.#lastSeq) return;
    this.#lastSeq = event.seq;
    this.state.updated_at = event.at;
    switch (event.type) {
      case "prompt_started":
        return this.#started(event);
      case "verification_finished":
        return this.#verified(event);
      case "retry_scheduled":
        return this.#retry(event);
      case "prompt_completed":
      case "prompt_failed":
        return this.#ended(event);
      case "session_resumed": {
        const record = this.#record(event);
        if (record !== null) {
          record.resumes = whole(event.data.resume) ?? record.resumes + 1;
        }
        return;
      }
      case "run_resumed":
        return this.#settleDead(event.at);
      default:
        return this.#provider(event);
    }
  }

  #entry(id: string, at: string): PromptState {
    const entry = this.state.prompts[id] ??= {
      status: "running",
      name: "",
      run_id: this.#runId,
      updated_at: at,
      attempts: [],
      last_verifier: null,
      failure_class: null,
      reason: null,
    };
    entry.updated_at = at;
    return entry;
  }

  /** The prompt an event is about. */
  #prompt(event: Event): PromptState | null {
    const id = event.prompt_id ?? text(event.data.prompt_id);
    return id === null ? null : this.state.prompts[id] ?? null;
  }

  /** The attempt an event belongs to (its prompt's latest, by default). */
  #record(event: Event): AttemptRecord | null {
    const attempts = this.#prompt(event)?.attempts ?? [];
    return attempts.findLast((a) => a.attempt === event.attempt) ??
      attempts.at(-1) ?? null;
  }

  #tally(record: AttemptRecord): UsageTally {
    let tally = this.#tallies.get(record);
    if (tally === undefined) {
      this.#tallies.set(record, tally = new UsageTally());
    }
    return tally;
  }

  /** Ends an attempt as the runner does: its usage is its sessions' tally. */
  #finish(record: AttemptRecord, status: AttemptStatus, at: string): void {
    record.status = status;
    record.finished_at ??= at;
    record.usage ??= this.#tally(record).usage;
  }

  #started(event: Event): void {
    const id = event.prompt_id ?? text(event.data.prompt_id);
    if (id === null) return;
    const entry = this.#entry(id, event.at);
    const name = text(event.data.name);
    if (name !== null) entry.name = name;
    const previous = entry.attempts.at(-1);
    if (previous?.status === "running") {
      // Only a repair follows an attempt without an event between them.
      this.#finish(
        previous,
        this.#sessionFailed.has(previous) ? "failed" : "verification_failed",
        event.at,
      );
    }
    const mode = MODES.find((m) => m === event.data.mode) ?? "run";
    entry.attempts.push(
      startedAttempt(
        this.#runId,
        whole(event.data.attempt) ?? event.attempt ?? entry.attempts.length + 1,
        mode,
        event.at,
      ),
    );
    entry.status = "running";
    entry.run_id = this.#runId;
  }

  #verified(event: Event): void {
    const entry = this.#prompt(event);
    const record = this.#record(event);
    if (entry === null || record === null) return;
    const report = reportOf(event.data);
    record.verifier = report;
    record.finished_at = event.at;
    record.usage = this.#tally(record).usage;
    entry.last_verifier = report;
  }

  #retry(event: Event): void {
    const entry = this.#prompt(event);
    const record = this.#record(event);
    if (entry === null || record === null) return;
    this.#finish(record, "failed", event.at);
    const failureClass = text(event.data.failure_class);
    // The runner names no class "unknown" in the attempt's record.
    record.failure_class = failureClass === "unknown" ? null : failureClass;
    record.reason = text(event.data.reason);
    entry.status = "retry_scheduled";
    entry.reason = record.reason;
  }

  #ended(event: Event): void {
    const id = event.prompt_id ?? text(event.data.prompt_id);
    if (id === null) return;
    const entry = this.#entry(id, event.at);
    const status = PROMPT_STATUSES.find((s) => s === event.data.status) ??
      (event.type === "prompt_completed" ? "completed" : "failed");
    entry.status = status;
    entry.reason = text(event.data.reason);
    entry.run_id = this.#runId;
    if (status === "blocked") {
      const by = event.data.blocked_by;
      entry.blocked_by = Array.isArray(by) ? by.map(String) : [];
      return;
    }
    const last = entry.attempts.at(-1);
    if (last?.status !== "running") return;
    this.#finish(
      last,
      ENDINGS.find((s) => s === status) ?? "failed",
      event.at,
    );
    last.reason = entry.reason;
  }

  /** A resumed run: what its dead runner left running was interrupted. */
  #settleDead(at: string): void {
    settleDeadAttempts(this.state, at);
  }

  /** A provider event: a session starting, its usage, its failure. */
  #provider(event: Event): void {
    const record = this.#record(event);
    if (record === null || record.status !== "running") return;
    this.#tally(record).observe(
      { type: event.type, data: event.data } as unknown as ProviderEvent,
    );
    if (event.type === "error_occurred" || event.type === "run_failed") {
      this.#sessionFailed.add(record);
    }
  }
}
