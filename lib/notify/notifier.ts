/**
 * The notifier: it watches a run's events and, for each `notify:` rule an
 * event triggers, delivers the event to the rule's command or webhook —
 * off the hot path, through a bounded queue and a few workers, each
 * delivery bounded in time — and reports every outcome for the audit log.
 * Nothing it does can block, slow or fail the run.
 *
 * @module
 */

import { errorText } from "../shared/errors.ts";
import type { RunEvent } from "../shared/events.ts";
import type { NotifyOn, NotifyRule } from "../shared/notify_rule.ts";
import { deliverCommand } from "./_command_delivery.ts";
import { type DeliveryResult, endedReason } from "./_delivery.ts";
import { notifyEnv, type NotifyRun } from "./_notify_env.ts";
import { deliverWebhook } from "./_webhook_delivery.ts";
import { notifyMoments, ruleMoment } from "./notify_moments.ts";
import { notifyTarget, notifyVia } from "./notify_target.ts";

export type { NotifyRun };

/** One outcome, as the audit log records it (command `notified`). */
export interface NotifyRecord {
  /** What was notified, to whom, and for which event. */
  params: {
    /** The moment (`attention`, `failed`, `completed`, `finished`). */
    on: NotifyOn;
    /** The program, or the webhook URL without its secrets. */
    target: string;
    /** `command` or `webhook`. */
    via: "command" | "webhook";
    /** The triggering event's `seq`. */
    seq: number;
    /** The triggering event's type. */
    type: string;
    /** For a record of dropped deliveries: how many. */
    dropped?: number;
  };
  /** `applied` when delivered, `rejected` when not. */
  outcome: "applied" | "rejected";
  /** A note (how it went), or why it failed. */
  reason: string;
  /** The prompt the event concerns, if any. */
  prompt_id: string | null;
  /** The attempt the event concerns, if any. */
  attempt: number | null;
}

/** How much a notifier may do, and for how long. */
export interface NotifyLimits {
  /** A command's time limit, when its rule gives none. */
  commandTimeoutMs: number;
  /** A webhook try's time limit, when its rule gives none. */
  webhookTimeoutMs: number;
  /** A webhook's tries after the first. */
  retries: number;
  /** The pause before a webhook's first retry (doubling after). */
  backoffMs: number;
  /** Deliveries waiting at most; more are dropped (and logged as dropped). */
  queue: number;
  /** Deliveries under way at once. */
  concurrency: number;
  /** After the grace: how long stopped deliveries get to record their end. */
  settleMs: number;
}

/** The limits a notifier has unless told otherwise. */
export const DEFAULT_NOTIFY_LIMITS: Readonly<NotifyLimits> = {
  commandTimeoutMs: 10_000,
  webhookTimeoutMs: 5_000,
  retries: 3,
  backoffMs: 500,
  queue: 64,
  concurrency: 4,
  settleMs: 1_000,
};

/** Options for {@linkcode Notifier}. */
export interface NotifierOptions {
  /** The rules (the packet's, then the workspace's). */
  rules: readonly NotifyRule[];
  /** The run. */
  run: NotifyRun;
  /** Records an outcome (the plane appends it to `log.jsonl`). */
  record(record: NotifyRecord): Promise<void>;
  /** Says something once per `key` (a target that fails, a log that cannot be written). */
  warn?(key: string, message: string): void | Promise<void>;
  /** Limits replacing the defaults (tests shrink them). */
  limits?: Partial<NotifyLimits>;
}

interface Job {
  rule: NotifyRule;
  on: NotifyOn;
  event: RunEvent;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

function ticker(ms: number): { promise: Promise<void>; stop(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const promise = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  return { promise, stop: () => clearTimeout(timer) };
}

/** `promise`, or nothing once `ms` pass (the timer cleared either way). */
async function atMost(promise: Promise<unknown>, ms: number): Promise<void> {
  const limit = ticker(ms);
  try {
    await Promise.race([promise, limit.promise]);
  } finally {
    limit.stop();
  }
}

/**
 * Delivers a run's notifications. {@linkcode Notifier.observe} is called
 * with every event and returns at once; {@linkcode Notifier.close} gives
 * the deliveries still under way a bounded grace when the run ends.
 */
export class Notifier {
  readonly #options: NotifierOptions;
  readonly #limits: NotifyLimits;
  readonly #queue: Job[] = [];
  readonly #running = new Set<Running>();
  #records: Promise<void> = Promise.resolve();
  #dropped: { first: Job; last: Job; count: number } | null = null;
  #idle: (() => void)[] = [];
  #closing = false;

  /** Creates a notifier for a run's rules. */
  constructor(options: NotifierOptions) {
    this.#options = options;
    this.#limits = { ...DEFAULT_NOTIFY_LIMITS, ...options.limits };
  }

  /** Deliveries waiting or under way. */
  get pending(): number {
    return this.#queue.length + this.#running.size;
  }

  /**
   * Sees an event: queues a delivery for each rule it triggers and returns
   * at once. Never throws, never waits for a delivery; when the queue is
   * full the delivery is dropped (and the drop recorded).
   */
  observe(event: RunEvent): void {
    if (this.#closing) return;
    if (event.type !== "attention_needed" && event.type !== "run_finished") {
      return;
    }
    try {
      const moments = notifyMoments(event);
      for (const rule of this.#options.rules) {
        const on = ruleMoment(rule, moments);
        if (on === null) continue;
        const job = { rule, on, event };
        if (this.#queue.length >= this.#limits.queue) {
          this.#dropped ??= { first: job, last: job, count: 0 };
          this.#dropped.last = job;
          this.#dropped.count++;
        } else {
          this.#queue.push(job);
        }
      }
      this.#pump();
    } catch (error) {
      this.#warn(
        "internal",
        `cannot queue a notification: ${errorText(error)}`,
      );
    }
  }

  /**
   * The run ended: waits up to `graceMs` for the deliveries waiting or
   * under way, then stops the rest (a command's process group killed, a
   * POST aborted) and records each as rejected. Returns within about
   * `graceMs` plus the limits' `settleMs`; never throws.
   */
  async close(graceMs: number): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    if (this.pending > 0) {
      await atMost(
        new Promise<void>((resolve) => this.#idle.push(resolve)),
        graceMs,
      );
    }
    const reason = endedReason(graceMs);
    for (const job of this.#queue.splice(0)) {
      this.#record(job, { ok: false, reason: `not started: ${reason}` });
    }
    const running = [...this.#running];
    for (const entry of running) entry.controller.abort(reason);
    await atMost(
      Promise.all(running.map((entry) => entry.done)),
      this.#limits.settleMs,
    );
    this.#recordDropped();
    await atMost(this.#records, this.#limits.settleMs);
  }

  #pump(): void {
    while (
      this.#queue.length > 0 && this.#running.size < this.#limits.concurrency
    ) {
      this.#start(this.#queue.shift()!);
    }
    if (this.#queue.length === 0) this.#recordDropped();
    if (this.pending === 0) {
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  #start(job: Job): void {
    const controller = new AbortController();
    const entry: Running = { controller, done: Promise.resolve() };
    this.#running.add(entry);
    entry.done = this.#deliver(job, controller.signal)
      .catch((error): DeliveryResult => ({
        ok: false,
        reason: `internal error: ${errorText(error)}`,
      }))
      .then((result) => this.#record(job, result))
      .finally(() => {
        this.#running.delete(entry);
        // During the grace the queue still drains; after it, nothing starts.
        if (!controller.signal.aborted) this.#pump();
      });
  }

  #deliver(job: Job, signal: AbortSignal): Promise<DeliveryResult> {
    const { rule, on, event } = job;
    const body = JSON.stringify(event);
    if ("command" in rule) {
      return deliverCommand({
        argv: rule.command,
        cwd: rule.dir,
        env: notifyEnv(on, event, this.#options.run),
        input: `${body}\n`,
        timeoutMs: rule.timeout_ms ?? this.#limits.commandTimeoutMs,
        signal,
      });
    }
    return deliverWebhook({
      url: rule.webhook,
      shown: notifyTarget(rule),
      body,
      timeoutMs: rule.timeout_ms ?? this.#limits.webhookTimeoutMs,
      retries: this.#limits.retries,
      backoffMs: this.#limits.backoffMs,
      signal,
    });
  }

  /** Queues an outcome's record behind the others (never two writes at once). */
  #record(job: Job, result: DeliveryResult, dropped?: number): Promise<void> {
    const { rule, on, event } = job;
    const target = notifyTarget(rule);
    const record: NotifyRecord = {
      params: {
        on,
        target,
        via: notifyVia(rule),
        seq: event.seq,
        type: event.type,
        ...(dropped === undefined ? {} : { dropped }),
      },
      outcome: result.ok ? "applied" : "rejected",
      reason: result.ok ? result.note : result.reason,
      prompt_id: event.prompt_id ??
        (typeof event.data.prompt_id === "string"
          ? event.data.prompt_id
          : null),
      attempt: event.attempt,
    };
    if (!result.ok && dropped === undefined) {
      this.#warn(
        `target:${target}`,
        `a notification to ${target} failed: ${result.reason} (see 'control log')`,
      );
    }
    this.#records = this.#records.then(async () => {
      try {
        await this.#options.record(record);
      } catch (error) {
        this.#warn("record", `cannot log a notification: ${errorText(error)}`);
      }
    });
    return this.#records;
  }

  #recordDropped(): void {
    const dropped = this.#dropped;
    if (dropped === null) return;
    this.#dropped = null;
    this.#record(dropped.first, {
      ok: false,
      reason:
        `dropped: ${this.#limits.queue} notifications were already waiting; ${dropped.count} dropped, for events ${dropped.first.event.seq} to ${dropped.last.event.seq}`,
    }, dropped.count);
  }

  #warn(key: string, message: string): void {
    try {
      Promise.resolve(this.#options.warn?.(key, `notify: ${message}`))
        .catch(() => {});
    } catch {
      // Warnings are best effort.
    }
  }
}
