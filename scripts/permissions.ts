/**
 * The permissions the CLI runs with: the same for `deno task prompt_runner`,
 * the compiled binary, the demo, and the CLI tests. (deno.json's tasks spell
 * them out too, since JSON cannot import.)
 *
 * @module
 */

/** `--allow-*` flags for `deno run` / `deno compile` of `main.ts`. */
export const CLI_PERMISSIONS: readonly string[] = [
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-sys=hostname,uid",
];
