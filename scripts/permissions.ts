/**
 * The permissions the CLI runs with: the same for `deno task prompt_runner`,
 * the compiled binary, the demo, and the CLI tests. (deno.json's tasks spell
 * them out too, since JSON cannot import.)
 *
 * @module
 */

/**
 * Flags for `deno run` / `deno compile` of `main.ts`: the `--allow-*`
 * permissions, and `--unstable-worker-options`, which lets the control
 * commands narrow a worker's permissions to the run's state root
 * (DESIGN §11).
 */
export const CLI_PERMISSIONS: readonly string[] = [
  "--unstable-worker-options",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-env",
  "--allow-sys=hostname,uid,networkInterfaces",
  "--allow-net",
];
