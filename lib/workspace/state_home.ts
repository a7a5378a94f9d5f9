/**
 * Where prompt_runner keeps the operator's own state: the XDG state
 * directory, its workspaces' state roots, and their registry.
 *
 * @module
 */

import { isAbsolute, join } from "../shared/posix_path.ts";
import { UsageError } from "../shared/errors.ts";
import { STATE_HOME_NAMES } from "../shared/state_root_layout.ts";

/** Where the environment is read from (tests pass their own). */
export interface StateHomeOptions {
  /** Environment variables; `Deno.env` when absent. */
  env?: Readonly<Record<string, string | undefined>>;
}

function variable(options: StateHomeOptions, name: string): string | undefined {
  return options.env === undefined ? Deno.env.get(name) : options.env[name];
}

/**
 * prompt_runner's folder of the XDG state directory:
 * `$XDG_STATE_HOME/prompt_runner`, else `~/.local/state/prompt_runner` (a
 * relative `XDG_STATE_HOME` is ignored, as the XDG rules say).
 *
 * @throws {UsageError} when neither `XDG_STATE_HOME` nor `HOME` is set.
 */
export function stateHome(options: StateHomeOptions = {}): string {
  const xdg = variable(options, "XDG_STATE_HOME");
  if (xdg && isAbsolute(xdg)) return join(xdg, "prompt_runner");
  const home = variable(options, "HOME");
  if (home && isAbsolute(home)) {
    return join(home, ".local", "state", "prompt_runner");
  }
  throw new UsageError(
    "Cannot tell where workspaces live: neither XDG_STATE_HOME nor HOME is set to an absolute path",
    {
      code: "NO_STATE_HOME",
      hint: "Set XDG_STATE_HOME, or give the workspace a state_root",
    },
  );
}

/** The default state root of workspace `id`. */
export function defaultWorkspaceRoot(
  id: string,
  options: StateHomeOptions = {},
): string {
  return join(stateHome(options), STATE_HOME_NAMES.workspaces, id);
}

/** The registry of prepared workspaces (`workspaces.json`). */
export function registryFile(options: StateHomeOptions = {}): string {
  return join(stateHome(options), STATE_HOME_NAMES.registry);
}
