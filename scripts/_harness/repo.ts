/**
 * Git work trees for the scripts and the tests (`tests/_helpers/temp_packet.ts`
 * re-exports these).
 *
 * @module
 */

import { join } from "node:path";

const GIT_ENV = {
  GIT_AUTHOR_NAME: "test",
  GIT_AUTHOR_EMAIL: "test@example.invalid",
  GIT_COMMITTER_NAME: "test",
  GIT_COMMITTER_EMAIL: "test@example.invalid",
};

/** Runs git in a directory and fails loudly. */
export async function git(cwd: string, args: string[]): Promise<string> {
  const result = await new Deno.Command("git", {
    args,
    cwd,
    env: GIT_ENV,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!result.success) {
    throw new Error(
      `git ${args.join(" ")}: ${new TextDecoder().decode(result.stderr)}`,
    );
  }
  return new TextDecoder().decode(result.stdout);
}

/** Makes a git work tree with an initial commit of `files`. */
export async function makeRepo(
  dir: string,
  files: Record<string, string> = { "README.md": "seed\n" },
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    await Deno.writeTextFile(full, text);
  }
  await git(dir, ["init", "--quiet", "--initial-branch=main"]);
  await git(dir, ["add", "--all"]);
  await git(dir, ["commit", "--quiet", "--allow-empty", "-m", "seed"]);
}
