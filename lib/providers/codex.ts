/**
 * The Codex adapter's `exec` lane (`agent.transport: exec`; the default,
 * `codex app-server`, is `codex_app_server.ts`) for `@openai/codex` 0.171.0:
 * `codex exec --json` with the prompt on argv, and `codex exec … resume
 * <thread_id>` for a steer or a resume. Codex takes no live input in
 * `exec`, so a steer interrupts the turn and resumes the thread.
 *
 * Traps it avoids: `exec resume` rejects `-s`, `-C` and `--add-dir` after
 * `resume`, so every flag goes before it; a prompt starting with `-` would
 * be read as a flag, so the text follows `--`; `--full-auto` and `-a` are
 * gone from `exec`, so the approval policy is a `-c` setting; and Codex
 * ignores `OPENAI_BASE_URL`, so a base URL is the `openai_base_url` setting
 * (`agent.config`). The core closes stdin (Codex blocks on an open one).
 *
 * @module
 */

import type { CliInvocation, CliProfile } from "./cli_profile.ts";
import type { AgentOptions } from "../packet/agent_options.ts";
import { codexParser } from "./_codex_parser.ts";

/** The sandbox Codex runs in unless `agent.sandbox` says otherwise. */
export const CODEX_DEFAULT_SANDBOX = "workspace-write";
/** The approval policy unless `agent.approval_policy` says otherwise. */
export const CODEX_DEFAULT_APPROVAL_POLICY = "never";

/**
 * A `-c` value in TOML: a string as a basic string (JSON's escapes are
 * TOML's), a number or a boolean as itself.
 */
export function tomlValue(value: string | number | boolean): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" && !Number.isFinite(value)) {
    return JSON.stringify(String(value));
  }
  return String(value);
}

/** A `-c` setting: its key and value. */
export type CodexSetting = [string, string | number | boolean];

/**
 * The `-c key=value` arguments of a prompt's settings: `first` (what a
 * lane sets its own way), `model_reasoning_effort`, `approval_policy`
 * (default {@linkcode CODEX_DEFAULT_APPROVAL_POLICY}), then `agent.config`,
 * whose pairs replace any earlier setting of the same key.
 *
 * @example Usage
 * ```ts
 * import { codexSettingArgs } from "./codex.ts";
 * import { DEFAULT_AGENT_OPTIONS } from "../packet/agent_options.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   codexSettingArgs({ ...DEFAULT_AGENT_OPTIONS, config: { approval_policy: "on-request" } }),
 *   ["-c", 'approval_policy="on-request"'],
 * );
 * ```
 */
export function codexSettingArgs(
  options: AgentOptions,
  first: CodexSetting[] = [],
): string[] {
  const settings: CodexSetting[] = [...first];
  if (options.reasoning_effort) {
    settings.push(["model_reasoning_effort", options.reasoning_effort]);
  }
  settings.push([
    "approval_policy",
    options.approval_policy ?? CODEX_DEFAULT_APPROVAL_POLICY,
  ]);
  for (const [key, value] of Object.entries(options.config)) {
    const at = settings.findIndex(([known]) => known === key);
    if (at >= 0) settings.splice(at, 1);
    settings.push([key, value]);
  }
  return settings.flatMap(([key, value]) => [
    "-c",
    `${key}=${tomlValue(value)}`,
  ]);
}

/** The flags that start and resume alike (all of them go before `resume`). */
function execFlags(invocation: CliInvocation): string[] {
  const { options } = invocation;
  const args = ["exec", "--json", "--skip-git-repo-check"];
  if (invocation.model) args.push("-m", invocation.model);
  args.push("-s", options.sandbox ?? CODEX_DEFAULT_SANDBOX);
  args.push("-C", invocation.cwd);
  for (const dir of options.add_dirs) args.push("--add-dir", dir);
  return [...args, ...codexSettingArgs(options)];
}

/** The codex CLI's profile. */
export const codexProfile: CliProfile = {
  name: "codex",
  binName: "codex",
  defaultModel: "default",
  liveInput(): boolean {
    return false;
  },
  startArgs(invocation: CliInvocation): string[] {
    return [...execFlags(invocation), "--", invocation.text];
  },
  resumeArgs(invocation: CliInvocation, sessionId: string): string[] {
    return [
      ...execFlags(invocation),
      "resume",
      "--",
      sessionId,
      invocation.text,
    ];
  },
  parser: codexParser,
};
