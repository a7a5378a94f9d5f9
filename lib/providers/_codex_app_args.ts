/**
 * The `codex app-server` argv: the prompt's settings as `-c key=value`.
 *
 * @module
 */

import {
  CODEX_DEFAULT_SANDBOX,
  type CodexSetting,
  codexSettingArgs,
} from "./codex.ts";
import type { SessionRequest } from "./provider.ts";

/**
 * The `codex app-server` argv for a request.
 *
 * @example Usage
 * ```ts
 * import { codexAppServerArgs } from "./_codex_app_args.ts";
 * import { DEFAULT_AGENT_OPTIONS } from "../packet/agent_options.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   codexAppServerArgs({ model: "gpt-5.5", agent: DEFAULT_AGENT_OPTIONS }),
 *   [
 *     "app-server",
 *     "-c", 'model="gpt-5.5"',
 *     "-c", 'sandbox_mode="workspace-write"',
 *     "-c", 'approval_policy="never"',
 *   ],
 * );
 * ```
 */
export function codexAppServerArgs(
  request: Pick<SessionRequest, "model" | "agent">,
): string[] {
  const options = request.agent;
  const first: CodexSetting[] = [];
  if (request.model) first.push(["model", request.model]);
  first.push(["sandbox_mode", options.sandbox ?? CODEX_DEFAULT_SANDBOX]);
  const args = ["app-server", ...codexSettingArgs(options, first)];
  if (options.add_dirs.length > 0) {
    // A TOML array of strings is written as JSON writes it.
    args.push(
      "-c",
      `sandbox_workspace_write.writable_roots=${
        JSON.stringify(options.add_dirs)
      }`,
    );
  }
  return args;
}
