/**
 * A bridge's hold on the fleet: connects in the background and keeps
 * trying (with backoff) while the fleet is down or refuses, says so once,
 * and hands out the connection whenever it is up, its streams and buckets
 * made first. Nothing here ever waits on the run.
 *
 * @module
 */

import { errorText } from "../shared/errors.ts";
import type { FleetLink } from "./_link.ts";
import { type LinkOptions, openLink } from "./_load.ts";
import {
  CONTRACTS_BUCKET,
  EVENTS_STREAM,
  LOG_STREAM,
  REQUESTS_STREAM,
  RUNS_BUCKET,
} from "./fleet_names.ts";

/** The first pause after a failure, and the longest. */
const BACKOFF_MS = [100, 250, 500, 1_000];

/** Sleeps, or returns early when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** `promise`, or an `AbortError` as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    return Promise.reject(new DOMException("stopped", "AbortError"));
  }
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(new DOMException("stopped", "AbortError"));
    signal.addEventListener("abort", stop, { once: true });
    promise.then(resolve, reject).finally(() =>
      signal.removeEventListener("abort", stop)
    );
  });
}

/** Options for a {@linkcode FleetSession}. */
export interface SessionOptions extends LinkOptions {
  /** Replicas of the streams and buckets a bridge creates. */
  replicas: number;
  /** Where the one warning goes. */
  warn: (message: string) => void;
}

/** A bridge's connection to the fleet, kept up in the background. */
export class FleetSession {
  readonly #options: SessionOptions;
  readonly #stop = new AbortController();
  #link: FleetLink | null = null;
  #opening: Promise<FleetLink> | null = null;
  #ready: Promise<void> | null = null;
  #warned = false;
  #failures = 0;
  #wakers = new Set<() => void>();
  /** Hopeful at first: a fleet being connected to gets its grace. */
  #lastConnected = Date.now();
  #everConnected = false;

  constructor(options: SessionOptions) {
    this.#options = options;
  }

  /** The fleet's address as messages show it. */
  get shown(): string {
    return this.#options.url.shown;
  }

  /** Aborts when the session is closed. */
  get closed(): AbortSignal {
    return this.#stop.signal;
  }

  /** Whether the connection is up now. */
  get connected(): boolean {
    return this.#link?.state === "connected";
  }

  /**
   * When the fleet was last reachable (ms since the epoch; now while it
   * is; when the session started, while its first connection is being
   * made; `-Infinity` when it was refused from the start).
   */
  get lastConnected(): number {
    if (this.connected) {
      this.#lastConnected = Date.now();
      this.#everConnected = true;
    }
    return this.#lastConnected;
  }

  /** Says something about the fleet's copy of the run (a warning). */
  say(message: string): void {
    this.#options.warn(message);
  }

  /** Says once that the fleet is out of reach; the run is not affected. */
  warnOnce(cause: unknown): void {
    if (this.#warned) return;
    this.#warned = true;
    this.#options.warn(
      `${
        errorText(cause)
      }; the run goes on, and its fleet copy catches up when the fleet is back`,
    );
  }

  async #open(): Promise<FleetLink> {
    for (let attempt = 0;; attempt++) {
      if (this.#stop.signal.aborted) throw new Error("the bridge stopped");
      try {
        const link = await openLink({ patienceMs: 5_000, ...this.#options });
        if (this.#stop.signal.aborted) {
          await link.close();
          throw new Error("the bridge stopped");
        }
        this.#everConnected = true;
        link.onState((state, detail) => {
          this.#ready = null;
          if (state !== "connected") this.#lastConnected = Date.now();
          if (state === "disconnected") {
            this.warnOnce(
              `Lost the fleet at ${this.#options.url.shown} (${detail})`,
            );
          }
          for (const wake of this.#wakers) wake();
        });
        return link;
      } catch (error) {
        this.warnOnce(error);
        // Refused from the start: no grace is owed to it at the end.
        if (!this.#everConnected) this.#lastConnected = -Infinity;
        await pause(
          BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!,
          this.#stop.signal,
        );
      }
    }
  }

  async #prepare(link: FleetLink): Promise<void> {
    const replicas = this.#options.replicas;
    await link.ensureStream({
      name: EVENTS_STREAM,
      subjects: ["pr.ev.>"],
      replicas,
    });
    await link.ensureStream({
      name: LOG_STREAM,
      subjects: ["pr.log.>"],
      replicas,
    });
    await link.ensureStream({
      name: REQUESTS_STREAM,
      subjects: ["pr.req.>"],
      replicas,
      workQueue: true,
    });
    await link.ensureBucket(RUNS_BUCKET, replicas);
    await link.ensureBucket(CONTRACTS_BUCKET, replicas);
  }

  /**
   * The connection, once it is up and the fleet's streams and buckets
   * exist; waits (retrying) while the fleet is out of reach.
   *
   * @throws when `signal` aborts or the session closes first.
   */
  async ready(signal: AbortSignal): Promise<FleetLink> {
    for (;;) {
      if (signal.aborted || this.#stop.signal.aborted) {
        throw new DOMException("stopped", "AbortError");
      }
      if (this.#link === null) {
        this.#opening ??= this.#open();
        this.#link = await untilAborted(this.#opening, signal);
      }
      const link = this.#link;
      if (link.state === "closed") {
        this.#link = null;
        this.#opening = null;
        continue;
      }
      if (link.state === "connected") {
        this.#ready ??= this.#prepare(link);
        try {
          await this.#ready;
          this.#failures = 0;
          return link;
        } catch (error) {
          this.#ready = null;
          await this.backoff(error, signal);
          continue;
        }
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.#wakers.delete(wake);
          signal.removeEventListener("abort", wake);
          resolve();
        };
        this.#wakers.add(wake);
        signal.addEventListener("abort", wake, { once: true });
        setTimeout(wake, 1_000);
      });
    }
  }

  /** Waits after a failure, longer each time in a row (up to a second). */
  async backoff(cause: unknown, signal: AbortSignal): Promise<void> {
    this.warnOnce(cause);
    const ms = BACKOFF_MS[Math.min(this.#failures++, BACKOFF_MS.length - 1)]!;
    await pause(ms, signal);
  }

  /** Closes the connection; every wait ends. */
  async close(): Promise<void> {
    this.#stop.abort();
    for (const wake of this.#wakers) wake();
    const link = this.#link ?? await this.#opening?.catch(() => null);
    await link?.close();
  }
}
