/**
 * The Codex adapter (`@openai/codex` 0.171.0): `codex exec --json` with the
 * prompt on argv, and `codex exec … resume <thread_id>` for a steer or a
 * resume. Codex takes no live input in `exec`, so a steer interrupts the
 * turn and resumes the thread.
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

/** The flags that start and resume alike (all of them go before `resume`). */
function execFlags(invocation: CliInvocation): string[] {
  const { options } = invocation;
  const args = ["exec", "--json", "--skip-git-repo-check"];
  if (invocation.model) args.push("-m", invocation.model);
  args.push("-s", options.sandbox ?? CODEX_DEFAULT_SANDBOX);
  args.push("-C", invocation.cwd);
  for (const dir of options.add_dirs) args.push("--add-dir", dir);
  const settings: [string, string | number | boolean][] = [];
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
  for (const [key, value] of settings) {
    args.push("-c", `${key}=${tomlValue(value)}`);
  }
  return args;
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
