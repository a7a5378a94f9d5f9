/**
 * Turning an error of the environment (a full disk, an I/O error) into the
 * {@linkcode EnvironmentError} that stops a run so it can be resumed.
 *
 * @module
 */

import { EnvironmentError, errorText } from "../shared/errors.ts";
import { isEnvironmentError } from "../shared/files.ts";

/**
 * An error of the environment as an {@linkcode EnvironmentError} naming the
 * path; any other error unchanged.
 */
export function environmentFailure(error: unknown, path: string): unknown {
  if (error instanceof EnvironmentError || !isEnvironmentError(error)) {
    return error;
  }
  return new EnvironmentError(
    `Cannot write "${path}": ${errorText(error).replace(/:.*$/, "")}`,
    {
      code: "ENVIRONMENT",
      hint:
        "Free space (or fix the file system), then continue the run with 'prompt_runner run PACKET --resume'",
      cause: error,
    },
  );
}
