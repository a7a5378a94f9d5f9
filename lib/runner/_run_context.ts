/**
 * What the parts of a run share: its identity, hooks, state, output, steer
 * queue and live session, and the few acts every part needs (emit an event,
 * stop at a boundary, save the state).
 *
 * @module
 */

import { join } from "node:path";
import type { Packet } from "../packet/load_packet.ts";
import type { Session } from "../providers/provider.ts";
import type {
  AttentionReason,
  EventData,
  EventType,
  RunEvent,
  RunEventOf,
} from "../shared/events.ts";
import { moveLinkAside } from "../shared/files.ts";
import { LinkRefusedError } from "../shared/errors.ts";
import type { BoundaryCommand, RunHooks } from "../shared/run_hooks.ts";
import { sleep } from "../shared/sleep.ts";
import type { ViewSettings } from "../shared/view.ts";
import { environmentFailure } from "./_environment_failure.ts";
import { EventOutput } from "./event_output.ts";
import type { PromptOutcome, RunPacketOptions } from "./run_options.ts";
import {
  type AttemptRecord,
  emptyState,
  type PromptState,
  STATE_FILE,
  type StateFile,
  writeState,
} from "../status/state_file.ts";
import { SteerQueue } from "./steer_queue.ts";

/**
 * The idle tick: how long the runner waits, while no event flows (a quiet
 * provider, verification, a retry's delay), before it consumes control
 * requests again; half a second, so none waits more than about a second
 * (DESIGN §5).
 */
export const IDLE_TICK_MS = 500;

/** The shared state of one run, handed to its parts. */
export class RunContext {
  /** The packet being run. */
  readonly packet: Packet;
  /** The caller's options. */
  readonly options: RunPacketOptions;
  /** The run's id. */
  readonly runId: string;
  /** Aborted when the run is interrupted. */
  readonly abort = new AbortController();
  /** The renderer, sinks and transcript. */
  readonly output: EventOutput;
  /** Steers waiting for their lane. */
  readonly steers: SteerQueue;
  /** The control plane's hooks. */
  hooks: RunHooks;
  /** The state root, or `null` for an in-memory run. */
  stateRoot: string | null;
  /** What `state.json` holds. */
  state: StateFile = emptyState();
  /** The last event's `seq`. */
  seq = 0;
  /** The live provider session, while one is. */
  session: Session | null = null;
  /** The provider of the attempt under way (or the last one). */
  providerName: string | null = null;
  /** The prompt and attempt under way. */
  inFlight: { prompt: string; attempt: number } | null = null;
  /** Each attempted prompt's outcome, by id. */
  outcomes: Record<string, PromptOutcome> = {};
  /** The attempt under way, for the record of a run the environment stopped. */
  attempt: { entry: PromptState; record: AttemptRecord } | null = null;
  /** Attention raised in this process: `reason prompt attempt`. */
  readonly #raised = new Set<string>();

  constructor(
    packet: Packet,
    options: RunPacketOptions,
    view: ViewSettings,
    init: { runId: string; stateRoot: string | null; hooks: RunHooks },
  ) {
    this.packet = packet;
    this.options = options;
    this.runId = init.runId;
    this.stateRoot = init.stateRoot;
    this.hooks = init.hooks;
    this.output = new EventOutput(view, options.output);
    this.steers = new SteerQueue({
      where: (promptId) => ({
        attempt: this.inFlight?.prompt === promptId
          ? this.inFlight.attempt
          : null,
        provider: this.providerName,
      }),
      settled: async (result) => await this.hooks.steerSettled?.(result),
      steered: (steer, how, attempt) =>
        this.emit(
          "prompt_steered",
          {
            prompt_id: steer.prompt_id,
            text: steer.text,
            author: steer.author,
            delivery: how.delivery,
            mechanism: how.mechanism,
            request_id: steer.request_id,
          },
          steer.prompt_id,
          attempt,
        ),
    });
    if (options.signal) {
      const signal = options.signal;
      if (signal.aborted) this.abort.abort();
      else {
        signal.addEventListener("abort", () => this.abort.abort(), {
          once: true,
        });
      }
    }
  }

  /** Whether the run was interrupted. */
  get aborted(): boolean {
    return this.abort.signal.aborted;
  }

  /** Numbers an event, tells the hooks and `onEvent`, then shows it. */
  async emit<T extends EventType>(
    type: T,
    data: EventData<T>,
    promptId: string | null,
    attempt: number | null,
  ): Promise<void> {
    // The type checker cannot pair a generic type with its data shape.
    const event = {
      v: 1,
      seq: ++this.seq,
      at: new Date().toISOString(),
      run_id: this.runId,
      prompt_id: promptId,
      attempt,
      type,
      data,
    } as RunEventOf<T> as RunEvent;
    await this.hooks.observe?.(event);
    await this.options.onEvent?.(event);
    await this.output.show(event);
  }

  /**
   * Emits `attention_needed`: once per reason, prompt and attempt, unless
   * `again` (a stall, which the detector raises once per stall).
   */
  async attention(
    reason: AttentionReason,
    promptId: string | null,
    attempt: number | null,
    detail: string,
    again = false,
  ): Promise<void> {
    const key = `${reason} ${promptId} ${attempt}`;
    if (!again && this.#raised.has(key)) return;
    this.#raised.add(key);
    await this.emit(
      "attention_needed",
      { reason, prompt_id: promptId, attempt, detail },
      promptId,
      attempt,
    );
  }

  /** Whether attention was raised for this reason, prompt and attempt. */
  raised(
    reason: AttentionReason,
    promptId: string,
    attempt: number,
  ): boolean {
    return this.#raised.has(`${reason} ${promptId} ${attempt}`);
  }

  /**
   * Between events: applies the commands the hooks hand over (a view
   * change at once, a steer through the queue onto the live session).
   * `idle` is true when no event is flowing.
   */
  async boundary(idle: boolean): Promise<void> {
    const commands: BoundaryCommand[] = this.hooks.boundary
      ? await this.hooks.boundary({ idle })
      : [];
    for (const command of commands) {
      if (command.command === "set_view") {
        const view = await this.output.applyView(command.view);
        await this.hooks.viewChanged?.(view);
      } else if (command.command === "attention") {
        const attempt = this.inFlight?.prompt === command.prompt_id
          ? this.inFlight.attempt
          : null;
        await this.attention(
          command.reason,
          command.prompt_id,
          attempt,
          command.detail,
        );
      } else this.steers.push(command);
    }
    if (idle) await this.output.flushTranscript();
    await this.steers.deliver(this.session);
  }

  /** Runs `work` while consuming control requests every idle tick. */
  async whileIdle<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const settled = work.finally(() => {
      done = true;
      wake.abort();
    });
    const wake = new AbortController();
    while (!done) {
      await sleep(IDLE_TICK_MS, wake.signal);
      if (!done) await this.boundary(true);
    }
    return await settled;
  }

  /** A prompt's entry in the state, created (or renewed) for this run. */
  promptState(id: string, name: string): PromptState {
    const existing = this.state.prompts[id];
    if (existing) {
      existing.name = name;
      existing.run_id = this.runId;
      existing.updated_at = new Date().toISOString();
      return existing;
    }
    const created: PromptState = {
      status: "running",
      name,
      run_id: this.runId,
      updated_at: new Date().toISOString(),
      attempts: [],
      last_verifier: null,
      failure_class: null,
      reason: null,
    };
    this.state.prompts[id] = created;
    return created;
  }

  /** Writes `state.json` (nothing for an in-memory run). */
  async saveState(): Promise<void> {
    const root = this.stateRoot;
    if (root === null) return;
    try {
      await this.guardLinks(() => writeState(root, this.state));
    } catch (error) {
      throw environmentFailure(error, join(root, STATE_FILE));
    }
  }

  /**
   * Runs file work in the state root; a link found on the way is moved
   * aside (never followed), reported to the hooks, and the work tried again.
   */
  async guardLinks<T>(work: () => Promise<T>): Promise<T> {
    for (let tries = 0;; tries++) {
      try {
        return await work();
      } catch (error) {
        if (!(error instanceof LinkRefusedError) || tries >= 4) throw error;
        const refusal = await moveLinkAside(this.stateRoot!, error.path);
        if (refusal === null) continue;
        if (this.hooks.linkRefused) await this.hooks.linkRefused(refusal);
        else {
          await this.options.warn?.(
            `${
              JSON.stringify(refusal.path)
            } in the state root was a symbolic link; it was moved aside to ${
              JSON.stringify(refusal.moved_to)
            } and never followed`,
          );
        }
      }
    }
  }
}
