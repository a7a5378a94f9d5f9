/**
 * Probing a path: whether it exists, whether it is a directory.
 *
 * @module
 */

/**
 * Tells whether a path exists (without following a final symlink). A path
 * that cannot name anything (a file on the way, a name too long) does not.
 */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (
      error instanceof Deno.errors.NotFound ||
      error instanceof Deno.errors.NotADirectory ||
      (error as { code?: unknown }).code === "ENAMETOOLONG"
    ) {
      return false;
    }
    throw error;
  }
}

/** Tells whether a path is a directory (following symlinks); `false` when it is missing. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch {
    return false;
  }
}
