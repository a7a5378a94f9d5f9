/**
 * A runner's own bridge (`run --fleet`): the bridge in a worker, so its
 * publishing never runs on the runner's event loop. The runner starts it
 * once its plane is open and tells it when the run is over.
 *
 * @module
 */

import type { BridgeOptions, BridgeReport } from "./bridge.ts";

/** What the runner tells its bridge's worker. */
export type ToBridge =
  | { type: "start"; options: Omit<BridgeOptions, "warn"> }
  | { type: "finish"; graceMs: number }
  | { type: "stop" };

/** What the bridge's worker tells the runner. */
export type FromBridge =
  | { type: "warn"; message: string }
  | { type: "finished"; report: BridgeReport }
  | { type: "failed"; message: string };

/** A runner's bridge, running in its worker. */
export interface RunBridge {
  /**
   * The run is over: publishes the rest, waiting at most `graceMs` while
   * the fleet is out of reach, and ends the worker.
   */
  finish(graceMs?: number): Promise<BridgeReport | null>;
  /** Ends it at once. */
  stop(): Promise<BridgeReport | null>;
}

const WORKER = new URL("./_bridge_worker.ts", import.meta.url).href;

let testFault: BridgeOptions["fault"] = null;

/**
 * A test's hook: every runner's bridge this process starts kills the
 * process at `fault` (`request_written`: a request file is durable, its
 * message not yet acknowledged). Installed only by the tests' entry
 * (`tests/_helpers/fault_main.ts`); no environment variable reaches it.
 */
export function setBridgeFault(fault: BridgeOptions["fault"]): void {
  testFault = fault;
}

/**
 * Starts a run's bridge in a worker (never waits for the fleet).
 *
 * @param options What to publish, and where; `warn` is called on this
 * thread.
 */
export function startRunBridge(options: BridgeOptions): RunBridge {
  const { warn, ...rest } = options;
  const worker = new Worker(WORKER, { type: "module" });
  let settle: ((report: BridgeReport | null) => void) | null = null;
  let ended = false;
  worker.onmessage = (event: MessageEvent<FromBridge>) => {
    const message = event.data;
    if (message.type === "warn") warn(message.message);
    else if (message.type === "failed") {
      warn(`The fleet bridge failed: ${message.message}`);
      settle?.(null);
    } else settle?.(message.report);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    warn(`The fleet bridge failed: ${event.message}`);
    settle?.(null);
  };
  worker.postMessage(
    {
      type: "start",
      options: testFault ? { ...rest, fault: testFault } : rest,
    } satisfies ToBridge,
  );
  const end = (message: ToBridge): Promise<BridgeReport | null> => {
    if (ended) return Promise.resolve(null);
    ended = true;
    return new Promise<BridgeReport | null>((resolve) => {
      settle = resolve;
      worker.postMessage(message);
    }).finally(() => worker.terminate());
  };
  return {
    finish: (graceMs = 5_000) => end({ type: "finish", graceMs }),
    stop: () => end({ type: "stop" }),
  };
}
