/**
 * The runner: plans and runs a packet, and reports to the hooks the control
 * plane plugs into. The runner takes the plane as an injected opener
 * (`RunPacketOptions.plane`); {@linkcode runPacket} here passes the file
 * plane.
 *
 * @module
 */

import { openPlane } from "../control/plane.ts";
import type { Packet } from "../packet/load_packet.ts";
import { runPacket as runWithPlane } from "./run_packet.ts";
import type { RunPacketOptions, RunResult } from "./run_options.ts";

export type {
  OpenPlane,
  PromptOutcome,
  RunOutput,
  RunPacketOptions,
  RunResult,
} from "./run_options.ts";

/**
 * Runs a packet: each selected prompt in dependency order, with attempts,
 * failure-resume, verification and recovery (retry, repair), fail-fast.
 * Events go to the hooks, `onEvent` and the output; state goes to the state
 * root (`state.json`, `logs/`, `run.lock`) unless the run is in-memory.
 *
 * A run with a state root and no `hooks` reports to the file control plane
 * in that state root (what `control` and `serve` read), unless `plane`
 * names another: this function passes `plane: openPlane` (lib/control) to
 * the runner, which builds no plane itself.
 *
 * Requires `--allow-read`, `--allow-write` (the state root and the
 * workspace), `--allow-run` (git and verify commands), `--allow-env` and
 * `--allow-sys=hostname,uid`.
 *
 * @param packet A packet directory, or a loaded packet.
 * @param options Selection, provider, view, state root, output and hooks.
 * @returns How the run ended and each prompt's outcome. A failed prompt is
 * a result, not an exception.
 * @throws {NotFoundError} for a missing packet, prompt id or repo.
 * @throws {UsageError} for an invalid packet or an unavailable provider.
 * @throws {StateError} when another live run holds the state root, or an
 * agent CLI a killed runner left running cannot be stopped.
 *
 * @example Usage
 * ```ts
 * import { runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nname: hello\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_greet.prompt.md`,
 *   [
 *     "---",
 *     "verify: {files_exist: [HELLO.md]}",
 *     "simulate:",
 *     "  attempts:",
 *     "    - writes: [{path: HELLO.md, text: hi}]",
 *     "---",
 *     "Write HELLO.md.",
 *   ].join("\n"),
 * );
 * const result = await runPacket(dir, { stateRoot: null });
 * assert.equal(result.status, "completed");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function runPacket(
  packet: string | Packet,
  options: RunPacketOptions = {},
): Promise<RunResult> {
  return runWithPlane(packet, { plane: openPlane, ...options });
}
