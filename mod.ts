/**
 * prompt_runner runs packets of prompts against coding agents, verifies each
 * result against a deterministic contract, and lets other processes watch and
 * steer a live run through files in its state root.
 *
 * ```ts
 * import { runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_hello.prompt.md`,
 *   "---\nverify: {files_exist: [HELLO.md]}\nsimulate: {attempts: [{writes: [{path: HELLO.md, text: hi}]}]}\n---\nSay hello.\n",
 * );
 * const result = await runPacket(dir, { stateRoot: null });
 * assert.equal(result.status, "completed");
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @module
 */

export * from "./lib/shared/mod.ts";
export * from "./lib/packet/mod.ts";
export * from "./lib/verify/mod.ts";
export * from "./lib/providers/mod.ts";
export * from "./lib/runner/mod.ts";
export * from "./lib/render/mod.ts";
export * from "./lib/control/mod.ts";
