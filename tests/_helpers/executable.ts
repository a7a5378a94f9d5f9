/**
 * Writing a script the test then runs. A file this process has open for
 * writing cannot be executed (ETXTBSY), and `deno test --parallel` runs
 * test files on threads of one process: a child another thread forks in
 * the moment the script is being written inherits the write handle until
 * it execs, and the script's own spawn then fails with "Text file busy".
 * So the script is written to a staged file and copied into place by a
 * child process (`install`), whose handle on it never enters this process.
 *
 * @module
 */

/** Writes `text` to `path` as an executable (mode 0755), never opened for writing here. */
export async function writeExecutable(
  path: string,
  text: string,
): Promise<void> {
  const staged = `${path}.staged-${crypto.randomUUID()}`;
  await Deno.writeTextFile(staged, text);
  try {
    const copy = await new Deno.Command("install", {
      args: ["-m", "755", staged, path],
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!copy.success) {
      throw new Error(
        `install ${path} failed: ${new TextDecoder().decode(copy.stderr)}`,
      );
    }
  } finally {
    await Deno.remove(staged);
  }
}
