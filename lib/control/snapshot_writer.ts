/**
 * `snapshot.json`, writer side: the run's current state, folded from its
 * events, replaced atomically (never through a link) after the events it
 * names are on disk, at most once per 100 ms while events flow, at once on
 * a change that matters, and with a heartbeat while the run lives.
 *
 * @module
 */

import { isProviderEvent, type RunEvent } from "../shared/events.ts";
import { hostname } from "../shared/run_lock.ts";
import type { RunOpenInfo } from "../shared/run_hooks.ts";
import { writeFileAtomic } from "../shared/files.ts";
import { errorKind, type PlaneContext } from "./_plane_context.ts";
import type { EventLog } from "./event_log.ts";
import type { Snapshot } from "./snapshot.ts";
import { errorText } from "../shared/errors.ts";

/** While events flow, the snapshot is replaced at most this often. */
const COALESCE_MS = 100;
/** The snapshot is rewritten at least this often while the run lives. */
const HEARTBEAT_MS = 1500;

/** The snapshot a new run starts with. */
export function initialSnapshot(info: RunOpenInfo): Snapshot {
  const now = new Date().toISOString();
  return {
    v: 1,
    run_id: info.run_id,
    packet: info.packet,
    packet_dir: info.packet_dir,
    status: "running",
    prompt_id: null,
    prompt_name: null,
    attempt: null,
    mode: null,
    provider: info.provider,
    model: info.model,
    run_started_at: now,
    prompt_started_at: null,
    updated_at: now,
    elapsed_ms: 0,
    prompt_elapsed_ms: 0,
    tool_count: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: null,
    agent_pid: null,
    agent_pid_start: null,
    event_count: 0,
    last_seq: 0,
    steer_count: 0,
    max_steers: info.max_steers,
    view: { ...info.view },
    pid: Deno.pid,
    host: hostname(),
    started_by: info.started_by ?? null,
    prompt_ids: [...info.prompt_ids],
    attention: null,
    budget: null,
  };
}

/** Keeps a run's snapshot and publishes it. */
export class SnapshotWriter {
  readonly #ctx: PlaneContext;
  readonly #events: EventLog;
  /** The snapshot as it stands (the plane changes it in place). */
  readonly snapshot: Snapshot;
  #startedAt = performance.now();
  #promptStartedAt = 0;
  #lastWrite = 0;
  #dirty = false;
  #writing: Promise<void> = Promise.resolve();
  #pending = false;
  #timer: ReturnType<typeof setInterval> | undefined;
  #tokenBase = { input: 0, output: 0, cost: 0 };
  #tokens = { input: 0, output: 0, cost: 0 };
  #costSeen = false;
  /** Set when the plane is disabled: nothing more is written. */
  disabled = false;

  constructor(ctx: PlaneContext, events: EventLog, snapshot: Snapshot) {
    this.#ctx = ctx;
    this.#events = events;
    this.snapshot = snapshot;
  }

  /** Starts the heartbeat. */
  startHeartbeat(): void {
    this.#timer = setInterval(() => {
      if (performance.now() - this.#lastWrite >= HEARTBEAT_MS) {
        this.writeSoon();
      }
    }, 1000);
    Deno.unrefTimer(this.#timer);
  }

  /** Stops the heartbeat and waits for a write in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#writing;
  }

  /** Something changed that the next coalesced write publishes. */
  markDirty(): void {
    this.#dirty = true;
  }

  /**
   * Whether a write is due at a boundary: after a request, at most every
   * 100 ms while events flow, and as a heartbeat.
   */
  due(changed: boolean): boolean {
    const since = performance.now() - this.#lastWrite;
    return changed || (this.#dirty && since >= COALESCE_MS) ||
      since >= HEARTBEAT_MS;
  }

  /** An attempt started: its clock and token counts start again. */
  promptStarted(): void {
    this.#promptStartedAt = performance.now();
    this.#tokenBase = { input: 0, output: 0, cost: 0 };
    this.#tokens = { input: 0, output: 0, cost: 0 };
    this.#costSeen = false;
    this.snapshot.cost_usd = null;
    this.snapshot.agent_pid = null;
    this.snapshot.agent_pid_start = null;
    // The prompt moved on: what needed a person was seen to, or is history.
    this.snapshot.attention = null;
  }

  /** Folds one event into the snapshot. */
  fold(event: RunEvent): void {
    const snap = this.snapshot;
    snap.event_count++;
    snap.last_seq = event.seq;
    const data = event.data;
    // A stall ends with the next event from the agent.
    if (snap.attention?.reason === "stalled" && isProviderEvent(event)) {
      snap.attention = null;
    }
    switch (event.type) {
      case "attention_needed":
        snap.attention = {
          reason: event.data.reason,
          since: event.at,
          prompt_id: event.data.prompt_id,
          attempt: event.data.attempt,
          detail: event.data.detail,
        };
        break;
      case "run_started":
        // A new session (a resume) may count its tokens from zero again.
        this.#tokenBase = {
          input: this.#tokenBase.input + this.#tokens.input,
          output: this.#tokenBase.output + this.#tokens.output,
          cost: this.#tokenBase.cost + this.#tokens.cost,
        };
        this.#tokens = { input: 0, output: 0, cost: 0 };
        if (
          typeof event.data.pid === "number" &&
          Number.isInteger(event.data.pid) && event.data.pid > 0
        ) {
          snap.agent_pid = event.data.pid;
          snap.agent_pid_start = typeof data.pid_start === "string"
            ? data.pid_start
            : null;
        }
        break;
      case "tool_call_started":
        snap.tool_count++;
        break;
      case "token_usage_updated": {
        const input = Number(data.input_tokens);
        const output = Number(data.output_tokens);
        if (Number.isFinite(input) && input >= 0) this.#tokens.input = input;
        const cost = Number(data.cost_usd);
        if (
          data.cost_usd !== undefined && data.cost_usd !== null &&
          Number.isFinite(cost) && cost >= 0
        ) {
          this.#tokens.cost = cost;
          this.#costSeen = true;
        }
        if (Number.isFinite(output) && output >= 0) {
          this.#tokens.output = output;
        }
        break;
      }
    }
    snap.input_tokens = this.#tokenBase.input + this.#tokens.input;
    snap.output_tokens = this.#tokenBase.output + this.#tokens.output;
    if (this.#costSeen) {
      snap.cost_usd = Math.round(
        (this.#tokenBase.cost + this.#tokens.cost) * 1e6,
      ) / 1e6;
    }
    this.#dirty = true;
  }

  /**
   * Starts a write unless one is under way, without waiting for it: the
   * runner goes on while the events are synced and the file replaced.
   */
  writeSoon(): void {
    if (this.#pending) return;
    this.#pending = true;
    this.write().finally(() => {
      this.#pending = false;
    });
  }

  /** Queues a write of the snapshot as it stands now. */
  write(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#write());
    return this.#writing;
  }

  async #write(): Promise<void> {
    if (this.disabled) return;
    const ctx = this.#ctx;
    const now = performance.now();
    const snap = this.snapshot;
    snap.elapsed_ms = Math.round(now - this.#startedAt);
    snap.prompt_elapsed_ms = this.#promptStartedAt
      ? Math.round(now - this.#promptStartedAt)
      : 0;
    snap.updated_at = new Date().toISOString();
    this.#lastWrite = now;
    this.#dirty = false;
    // Every seq it names is in the file already; synced before it is published.
    const text = JSON.stringify(snap, null, 2) + "\n";
    try {
      await this.#events.sync();
      await ctx.guard(
        () =>
          writeFileAtomic(ctx.paths.snapshot, text, {
            ...ctx.within,
            onForeign: () => ctx.replacedUnseen("control/snapshot.json"),
          }),
        ctx.paths.dir,
      );
    } catch (error) {
      await ctx.warn(
        `snapshot:${errorKind(error)}`,
        `cannot write the snapshot: ${errorText(error)}`,
      );
    }
  }
}
