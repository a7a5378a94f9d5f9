/**
 * Opening a state root safely: it must be a real directory of ours that
 * nobody else can write, since whoever can write it can redirect the run's
 * writes and instruct its agent. prompt_runner changes the mode of no
 * directory it cannot tell it made, and deletes only what it made there.
 *
 * @module
 */

import { resolve } from "node:path";
import { errorText, NotFoundError, StateError } from "./errors.ts";
import { currentUid, DIR_MODE } from "./private_files.ts";
import {
  madeByPromptRunner,
  readStateRootContents,
  someEntries,
  type StateRootContents,
} from "./state_root_entries.ts";

/**
 * Directories that are never a state root: the system's, and the shared
 * ones every user writes. A state root is made private (0700), and
 * `workspace forget --delete` empties it.
 */
const SYSTEM_DIRECTORIES: ReadonlySet<string> = new Set([
  "/bin",
  "/boot",
  "/dev",
  "/dev/shm",
  "/etc",
  "/home",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/lost+found",
  "/media",
  "/mnt",
  "/nix",
  "/opt",
  "/proc",
  "/root",
  "/run",
  "/run/lock",
  "/run/user",
  "/sbin",
  "/snap",
  "/srv",
  "/sys",
  "/tmp",
  "/usr",
  "/usr/bin",
  "/usr/include",
  "/usr/lib",
  "/usr/lib32",
  "/usr/lib64",
  "/usr/libexec",
  "/usr/local",
  "/usr/local/bin",
  "/usr/local/etc",
  "/usr/local/include",
  "/usr/local/lib",
  "/usr/local/sbin",
  "/usr/local/share",
  "/usr/local/src",
  "/usr/sbin",
  "/usr/share",
  "/usr/src",
  "/var",
  "/var/backups",
  "/var/cache",
  "/var/db",
  "/var/empty",
  "/var/lib",
  "/var/local",
  "/var/lock",
  "/var/log",
  "/var/mail",
  "/var/opt",
  "/var/run",
  "/var/spool",
  "/var/tmp",
  "/var/www",
  // macOS
  "/Applications",
  "/Library",
  "/System",
  "/Users",
  "/Volumes",
  "/private",
  "/private/etc",
  "/private/tmp",
  "/private/var",
]);

function homeDirectory(): string | null {
  try {
    const home = Deno.env.get("HOME");
    return home ? resolve(home) : null;
  } catch {
    return null;
  }
}

/**
 * What a path is when it is a directory that is never a state root: the
 * root directory, a system or shared directory (`/tmp`, `/usr`, `/var/lib`,
 * …), or the user's home directory itself; else `null`.
 *
 * @example Usage
 * ```ts
 * import { systemDirectory } from "./state_root.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(systemDirectory("/"), "the root directory");
 * assert.equal(systemDirectory("/var/tmp"), "a system directory");
 * assert.equal(systemDirectory("/var/lib/pr/ops"), null);
 * ```
 */
export function systemDirectory(
  path: string,
  home: string | null = homeDirectory(),
): string | null {
  const dir = resolve(path);
  if (dir === "/") return "the root directory";
  if (SYSTEM_DIRECTORIES.has(dir)) return "a system directory";
  if (home !== null && dir === home) return "the home directory";
  return null;
}

function refused(
  root: string,
  detail: string,
  code: string,
  hint: string,
): StateError {
  return new StateError(`Refused to use state root "${root}": ${detail}`, {
    code,
    hint,
  });
}

const OWN_DIRECTORY =
  "A state root is a directory of its own: name a new one (it is made, mode 700)";

async function refuseSystemDirectory(
  root: string,
  real: string | null,
): Promise<void> {
  const home = homeDirectory();
  const realHome = home === null
    ? null
    : await Deno.realPath(home).catch(() => home);
  for (const path of real === null ? [root] : [root, real]) {
    const what = systemDirectory(path, home) ?? systemDirectory(path, realHome);
    if (what !== null) {
      throw refused(
        root,
        `it is ${what}${path === root ? "" : ` ("${path}")`}`,
        "STATE_ROOT_SYSTEM",
        OWN_DIRECTORY,
      );
    }
  }
}

/** A state root as checked: its real path, what it is and what it holds. */
export interface CheckedStateRoot {
  /** The path as named, made absolute. */
  root: string;
  /** Its real path. */
  real: string;
  /** Its mode bits (permissions, setuid/setgid/sticky), or `null` when unknown. */
  mode: number | null;
  /** What it holds. */
  contents: StateRootContents;
}

/**
 * Checks a state root without creating or changing anything: it is not the
 * root, a system or shared directory or the home directory; it is a
 * directory of this user's; it is not sticky; and when group or others can
 * write it, prompt_runner made it (only then may `repair` make it private).
 *
 * @returns The checked root, or `null` when it does not exist.
 * @throws {StateError} naming what is wrong.
 */
export async function checkStateRoot(
  path: string,
): Promise<CheckedStateRoot | null> {
  const root = resolve(path);
  await refuseSystemDirectory(root, null);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    if (error instanceof Deno.errors.NotADirectory) throw notADirectory(root);
    throw new StateError(
      `Cannot use state root "${root}": ${errorText(error)}`,
      { code: "STATE_ROOT_UNUSABLE", cause: error },
    );
  }
  if (!info.isDirectory) throw notADirectory(root);
  // Gone since the stat (`workspace forget --delete` racing a run): it
  // does not exist, as if the stat had said so.
  const real = await Deno.realPath(root).catch((error) => {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  });
  if (real === null) return null;
  if (real !== root) await refuseSystemDirectory(root, real);
  const uid = currentUid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw refused(
      root,
      `it belongs to user ${info.uid}, not to this user (${uid}), who could redirect the run's writes`,
      "STATE_ROOT_NOT_OURS",
      "Run as the user who owns it, or pick a state root of your own with --state-root DIR",
    );
  }
  const mode = info.mode === null ? null : info.mode & 0o7777;
  if (mode !== null && (mode & 0o1000) !== 0) {
    throw refused(
      root,
      `it is a shared directory (mode ${mode.toString(8)}: sticky, as /tmp is)`,
      "STATE_ROOT_SHARED",
      "Name a new directory inside it instead: it is made private (mode 700)",
    );
  }
  let contents: StateRootContents;
  try {
    contents = await readStateRootContents(real);
  } catch (error) {
    throw new StateError(
      `Cannot use state root "${root}": ${errorText(error)}`,
      { code: "STATE_ROOT_UNUSABLE", cause: error },
    );
  }
  if (
    mode !== null && (mode & 0o022) !== 0 && !madeByPromptRunner(contents)
  ) {
    throw refused(
      root,
      `group or others can write it (mode ${
        mode.toString(8)
      }), and prompt_runner cannot tell it made it (${
        contents.names.length === 0
          ? "it is empty"
          : `it holds ${someEntries(contents.foreign)}`
      })`,
      "STATE_ROOT_NOT_PRIVATE",
      `If it is yours to use, make it private with 'chmod 700 ${root}'; or name a new directory`,
    );
  }
  return { root, real, mode, contents };
}

/** Options for {@linkcode openStateRoot}. */
export interface OpenStateRootOptions {
  /** Create the directory (mode 0700) when it does not exist. */
  create?: boolean;
  /**
   * Make a state root prompt_runner made that group or others can write
   * private again (mode 0700); otherwise it is refused. A directory it
   * cannot tell it made is always refused, never changed.
   */
  repair?: boolean;
  /** Where a repaired mode is reported. */
  warn?: (message: string) => void | Promise<void>;
}

/**
 * Checks (and with `create`, makes) a state root, and returns its real path:
 * everything below it is then checked for links by the file primitives.
 *
 * @throws {StateError} when it is the root, a system, shared (sticky) or
 * home directory, not a directory, belongs to another user, or can be
 * written by group or others (without `repair`, or when prompt_runner
 * cannot tell it made it).
 * @throws {NotFoundError} when it does not exist and `create` is not set.
 */
export async function openStateRoot(
  path: string,
  options: OpenStateRootOptions = {},
): Promise<string> {
  let checked = await checkStateRoot(path);
  if (checked === null) {
    const root = resolve(path);
    if (!options.create) {
      throw new NotFoundError(`State root "${root}" does not exist`, {
        code: "STATE_ROOT_NOT_FOUND",
      });
    }
    await Deno.mkdir(root, { recursive: true, mode: DIR_MODE });
    checked = await checkStateRoot(root);
    if (checked === null) {
      throw new StateError(
        `Cannot use state root "${root}": it went away as it was made`,
        { code: "STATE_ROOT_UNUSABLE" },
      );
    }
  }
  const { root, real, mode } = checked;
  if (mode !== null && (mode & 0o022) !== 0) {
    if (!options.repair) {
      throw refused(
        root,
        `group or others can write it (mode ${mode.toString(8)})`,
        "STATE_ROOT_NOT_PRIVATE",
        `Make it private with 'chmod 700 ${root}'`,
      );
    }
    // checkStateRoot() refused it unless prompt_runner made it.
    await Deno.chmod(real, DIR_MODE);
    await options.warn?.(
      `state root "${root}" was writable by group or others (mode ${
        mode.toString(8)
      }); it is private again (700)`,
    );
  }
  return real;
}

function notADirectory(root: string): StateError {
  return new StateError(
    `Cannot use state root "${root}": it is not a directory`,
    {
      code: "STATE_ROOT_NOT_A_DIRECTORY",
      hint: "--state-root names the directory where run state is kept",
    },
  );
}
