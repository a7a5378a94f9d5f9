/**
 * The worker a runner's bridge runs in (`run --fleet`): off the runner's
 * event loop, so publishing never takes the runner's time. Started and
 * told when the run is over by `startRunBridge` (`run_bridge.ts`).
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { Bridge, type BridgeOptions } from "./bridge.ts";
import type { FromBridge, ToBridge } from "./run_bridge.ts";

let bridge: Bridge | null = null;

function post(message: FromBridge): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<ToBridge>) => {
  const message = event.data;
  try {
    if (message.type === "start") {
      const options: BridgeOptions = {
        ...message.options,
        warn: (text) => post({ type: "warn", message: text }),
      };
      bridge = await Bridge.start(options);
    } else if (bridge !== null) {
      const report = message.type === "finish"
        ? await bridge.finish({ graceMs: message.graceMs })
        : await bridge.stop();
      post({ type: "finished", report });
    }
  } catch (error) {
    post({
      type: "failed",
      message: error instanceof Error ? error.message : String(error),
    });
  }
};
