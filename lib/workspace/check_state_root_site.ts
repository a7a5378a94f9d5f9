/**
 * Where a named state root may be: never around the packet, a checkout or
 * prompt_runner's own state home, and never in a directory of someone
 * else's things, since a run writes there and `workspace forget --delete`
 * empties it.
 *
 * @module
 */

import { join, resolve } from "../shared/posix_path.ts";
import { UsageError } from "../shared/errors.ts";
import { checkStateRoot } from "../shared/state_root.ts";
import { realOrGiven } from "../shared/real_or_given.ts";
import {
  madeByPromptRunner,
  someEntries,
} from "../shared/state_root_entries.ts";
import { stateHome, type StateHomeOptions } from "./state_home.ts";
import { isWithin, workspaceKeyLine } from "./workspace_file.ts";

/** How the state root was named, for the message. */
export type StateRootSource =
  | { flag: "--state-root" }
  | { workspace_file: string };

/** What a state root is checked against (see {@linkcode stateRootClash}). */
export interface StateRootNeighbours extends StateHomeOptions {
  /** The packet the run uses, when known. */
  packet_dir: string | null;
  /** The repo checkouts the run uses (absolute paths). */
  repos: readonly string[];
  /** Do not count entries prompt_runner did not make as a clash. */
  allowForeign?: boolean;
}

/** Options for {@linkcode checkStateRootSite}. */
export interface StateRootSiteOptions extends StateRootNeighbours {
  /** Where the state root was named. */
  source: StateRootSource;
}

async function exists(path: string): Promise<boolean> {
  return (await Deno.lstat(path).catch(() => null)) !== null;
}

/**
 * What a state root clashes with, as the end of a sentence about it
 * (`contains the packet "…"`), or `null`.
 *
 * @throws {StateError} for a state root that is never one (see
 * `checkStateRoot`).
 */
export async function stateRootClash(
  root: string,
  options: StateRootNeighbours,
): Promise<string | null> {
  const checked = await checkStateRoot(root);
  const real = checked?.real ?? await realOrGiven(root);
  if (options.packet_dir !== null) {
    const packet = await realOrGiven(options.packet_dir);
    if (packet === real) return `is the packet "${packet}"`;
    if (isWithin(packet, real)) return `contains the packet "${packet}"`;
  }
  for (const given of options.repos) {
    const repo = await realOrGiven(given);
    if (repo === real) return `is the repo checkout "${repo}"`;
    if (isWithin(repo, real)) return `contains the repo "${repo}"`;
  }
  let home: string | null = null;
  try {
    home = await realOrGiven(stateHome(options));
  } catch {
    // No state home to clash with.
  }
  if (home !== null && isWithin(home, real)) {
    return `contains prompt_runner's state home "${home}"`;
  }
  if (checked === null) return null;
  const { contents } = checked;
  if (await exists(join(real, ".git"))) {
    return `is the repo checkout "${checked.root}"`;
  }
  for (const name of contents.foreign) {
    if (await exists(join(real, name, ".git"))) {
      return `contains the repo "${join(checked.root, name)}"`;
    }
  }
  if (
    !options.allowForeign && contents.names.length > 0 &&
    !madeByPromptRunner(contents)
  ) {
    return `is a non-empty directory prompt_runner did not create (it holds ${
      someEntries(contents.foreign)
    })`;
  }
  return null;
}

/**
 * Checks a state root named by `--state-root` or a workspace's `state_root`
 * before anything is written there: it must not be or contain the packet, a
 * repo checkout (a `.git` inside counts) or prompt_runner's state home, and
 * an existing directory must be empty or one prompt_runner made (only its
 * entries, or a workspace's tag).
 *
 * @param root The state root, absolute.
 * @throws {StateError} for a state root that is never one (a system,
 * shared or home directory, another user's: see `checkStateRoot`).
 * @throws {UsageError} (`STATE_ROOT_CLASH`) naming the key and the clash.
 */
export async function checkStateRootSite(
  root: string,
  options: StateRootSiteOptions,
): Promise<void> {
  const shown = resolve(root);
  const clash = await stateRootClash(shown, options);
  if (clash === null) return;
  if ("flag" in options.source) {
    throw new UsageError(
      `Invalid ${options.source.flag} "${shown}": it ${clash}`,
      {
        code: "STATE_ROOT_CLASH",
        hint:
          "A state root holds only prompt_runner's files: name a new or empty directory, or one a run made",
      },
    );
  }
  const file = options.source.workspace_file;
  const line = await workspaceKeyLine(file, ["state_root"]);
  throw new UsageError(
    `Invalid workspace file "${file}"${
      line === undefined ? "" : `, line ${line}`
    }, key "state_root": "${shown}" ${clash}`,
    {
      code: "STATE_ROOT_CLASH",
      hint:
        "A state root holds only prompt_runner's files: give state_root a new or empty directory (or leave it out for the default)",
    },
  );
}
