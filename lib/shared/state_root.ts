/**
 * Opening a state root safely: it must be a real directory of ours that
 * nobody else can write, since whoever can write it can redirect the run's
 * writes and instruct its agent.
 *
 * @module
 */

import { resolve } from "node:path";
import { NotFoundError, StateError } from "./errors.ts";
import { currentUid, DIR_MODE } from "./files.ts";

/** Options for {@linkcode openStateRoot}. */
export interface OpenStateRootOptions {
  /** Create the directory (mode 0700) when it does not exist. */
  create?: boolean;
  /**
   * Make a state root of ours that group or others can write private again
   * (mode 0700); otherwise it is refused.
   */
  repair?: boolean;
  /** Where a repaired mode is reported. */
  warn?: (message: string) => void | Promise<void>;
}

/**
 * Checks (and with `create`, makes) a state root, and returns its real path:
 * everything below it is then checked for links by the file primitives.
 *
 * @throws {StateError} when it is not a directory, belongs to another user,
 * or (without `repair`) can be written by group or others.
 * @throws {NotFoundError} when it does not exist and `create` is not set.
 */
export async function openStateRoot(
  path: string,
  options: OpenStateRootOptions = {},
): Promise<string> {
  const root = resolve(path);
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(root);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      if (!options.create) {
        throw new NotFoundError(`State root "${root}" does not exist`, {
          code: "STATE_ROOT_NOT_FOUND",
        });
      }
      await Deno.mkdir(root, { recursive: true, mode: DIR_MODE });
      info = await Deno.stat(root);
    } else if (error instanceof Deno.errors.NotADirectory) {
      throw notADirectory(root);
    } else {
      throw new StateError(
        `Cannot use state root "${root}": ${(error as Error).message}`,
        { code: "STATE_ROOT_UNUSABLE", cause: error },
      );
    }
  }
  if (!info.isDirectory) throw notADirectory(root);
  const real = await Deno.realPath(root);
  const uid = currentUid();
  if (uid !== null && info.uid !== null && info.uid !== uid) {
    throw new StateError(
      `Refused to use state root "${root}": it belongs to user ${info.uid}, not to this user (${uid}), who could redirect the run's writes`,
      {
        code: "STATE_ROOT_NOT_OURS",
        hint:
          "Run as the user who owns it, or pick a state root of your own with --state-root DIR",
      },
    );
  }
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    if (!options.repair) {
      throw new StateError(
        `Refused to use state root "${root}": group or others can write it (mode ${
          (info.mode & 0o777).toString(8)
        })`,
        {
          code: "STATE_ROOT_NOT_PRIVATE",
          hint: `Make it private with 'chmod 700 ${root}'`,
        },
      );
    }
    await Deno.chmod(real, DIR_MODE);
    await options.warn?.(
      `state root "${root}" was writable by group or others (mode ${
        (info.mode & 0o777).toString(8)
      }); it is private again (700)`,
    );
  } else if (
    options.repair && info.mode !== null && (info.mode & 0o077) !== 0
  ) {
    await Deno.chmod(real, DIR_MODE);
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
