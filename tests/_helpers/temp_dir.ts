/**
 * A temporary directory that removes itself.
 *
 * @module
 */

/** Runs `fn` with a fresh temporary directory, removed afterwards. */
export async function withTempDir(
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_test_" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
