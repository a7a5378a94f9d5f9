/**
 * The Gemini CLI adapter (`@google/gemini-cli` 0.61.0): `gemini
 * --prompt=<text> --output-format stream-json --skip-trust -m <model>`, and
 * `--resume <session_id>` in front of the same flags to steer or resume.
 *
 * - The prompt goes in one `--prompt=<text>` argument: after a separate
 *   `-p`, a text starting with `-` is read as a flag (`-p "-x"` exits 1,
 *   `-p --help` prints the help and exits 0).
 * - `--skip-trust` (and `GEMINI_CLI_TRUST_WORKSPACE=true`): in an untrusted
 *   folder the CLI exits 55 before doing anything.
 * - Always `-m <model>`: with the default `auto` model the user's prompt is
 *   recorded only after a routing call, so a session interrupted before it
 *   cannot be resumed (exit 42).
 * - Without `--approval-mode yolo` (or `auto_edit` for edits) a headless
 *   CLI does not even register its write and shell tools: their calls fail
 *   with `tool_not_registered`, and the turn still succeeds.
 * - No live input: a steer interrupts (SIGINT to the process group; the
 *   CLI exits 0 without a `result`) and resumes the session.
 * - `GEMINI_CLI_NO_RELAUNCH=true`: by default the CLI starts a second
 *   node process (itself, with a bigger heap) and waits for it while
 *   ignoring SIGINT, SIGTERM and SIGHUP; one process starts about a second
 *   sooner and takes signals itself. `agent.env: {GEMINI_CLI_NO_RELAUNCH:
 *   ""}` brings the relaunch back.
 * - Sessions live under `$HOME/.gemini/tmp/<project>/chats/`. A session
 *   whose first turn failed at the API (a 4xx/5xx, a dropped stream) is
 *   rolled back to nothing resumable: `--resume` then exits 42 ("No
 *   previous sessions found for this project."). An interrupted turn keeps
 *   its prompt and resumes.
 *
 * @module
 */

import type { CliInvocation, CliParser, CliProfile } from "./cli_profile.ts";
import { GeminiParser } from "./_gemini_parser.ts";

/** The model used when the packet names none. */
export const GEMINI_DEFAULT_MODEL = "gemini-2.5-pro";

function flags(invocation: CliInvocation): string[] {
  const { model, options } = invocation;
  const args = [
    `--prompt=${invocation.text}`,
    "--output-format",
    "stream-json",
    "--skip-trust",
    "-m",
    model !== null && model !== "" ? model : GEMINI_DEFAULT_MODEL,
  ];
  if (options.approval_mode !== null) {
    args.push("--approval-mode", options.approval_mode);
  }
  // Each value is split at commas by the CLI: a directory whose path holds
  // a comma cannot be named.
  for (const dir of options.add_dirs) args.push("--include-directories", dir);
  return args;
}

/**
 * The Gemini CLI's profile.
 *
 * @example Usage
 * ```ts
 * import { geminiProfile } from "./gemini.ts";
 * import { DEFAULT_AGENT_OPTIONS } from "../packet/agent_options.ts";
 * import assert from "node:assert/strict";
 *
 * const args = geminiProfile.resumeArgs({
 *   text: "-x: mind the tests",
 *   cwd: "/repo",
 *   model: null,
 *   options: { ...DEFAULT_AGENT_OPTIONS, approval_mode: "yolo" },
 *   liveInput: false,
 * }, "d6ce5acb");
 * assert.deepEqual(args.slice(0, 3), [
 *   "--resume",
 *   "d6ce5acb",
 *   "--prompt=-x: mind the tests",
 * ]);
 * assert.ok(args.includes("--skip-trust"));
 * ```
 */
export const geminiProfile: CliProfile = {
  name: "gemini",
  binName: "gemini",
  defaultModel: GEMINI_DEFAULT_MODEL,
  liveInput(): boolean {
    return false;
  },
  startArgs(invocation: CliInvocation): string[] {
    return flags(invocation);
  },
  resumeArgs(invocation: CliInvocation, sessionId: string): string[] {
    return ["--resume", sessionId, ...flags(invocation)];
  },
  env(): Record<string, string> {
    return {
      GEMINI_CLI_TRUST_WORKSPACE: "true",
      GEMINI_CLI_NO_RELAUNCH: "true",
    };
  },
  parser(): CliParser {
    return new GeminiParser();
  },
};
