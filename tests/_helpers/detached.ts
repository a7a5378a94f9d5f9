/**
 * Runners the test does not parent: started through a shell (`setsid`,
 * `nohup`, a tmux pane), found again by the pid in their `run.lock`, and
 * killed by that pid (and start time) when a test fails half way.
 *
 * @module
 */

import { join } from "node:path";
import { cliArgs } from "./run_cli.ts";
import { waitFor } from "./run_cli.ts";

/** Quotes one word for `sh`. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** `deno run … main.ts ARGS` as one `sh` command line. */
export function cliCommandLine(args: string[]): string {
  return [Deno.execPath(), ...cliArgs(args)].map(shellQuote).join(" ");
}

/** A runner's identity, from its `run.lock`. */
export interface RunnerProcess {
  /** Its pid. */
  pid: number;
  /** Its start time (field 22 of `/proc/<pid>/stat`), as the lock says. */
  pid_start: string;
  /** The run it runs. */
  run_id: string;
}

/** Waits for a run's `run.lock` and returns the runner it names. */
export async function waitForRunner(stateRoot: string): Promise<RunnerProcess> {
  return await waitFor("the runner's run.lock", async () => {
    try {
      const lock = JSON.parse(
        await Deno.readTextFile(join(stateRoot, "run.lock")),
      );
      return typeof lock.pid === "number" && typeof lock.pid_start === "string"
        ? { pid: lock.pid, pid_start: lock.pid_start, run_id: lock.run_id }
        : null;
    } catch {
      return null; // Not written yet, or written half way.
    }
  });
}

/**
 * The runner's state letter from `/proc/<pid>/stat` (`R`, `S`, `T` for
 * stopped, `Z`, …), or `null` when its pid is gone or now another process's
 * (the start time differs). Read with `cat`, since Deno refuses `/proc`
 * short of `--allow-all`.
 */
export async function runnerState(
  runner: RunnerProcess,
): Promise<string | null> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${runner.pid}/stat`],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!output.success) return null;
  const stat = new TextDecoder().decode(output.stdout);
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  // fields[0] is the state; fields[19] is field 22, the start time.
  return fields[19] === runner.pid_start ? fields[0] ?? null : null;
}

/** Whether the runner still lives: its pid exists, is it, and is no zombie. */
export async function runnerAlive(runner: RunnerProcess): Promise<boolean> {
  const state = await runnerState(runner);
  return state !== null && state !== "Z" && state !== "X";
}

/** Kills the runner (continuing it first, in case it was stopped) if it lives. */
export async function killRunner(runner: RunnerProcess): Promise<void> {
  if (!(await runnerAlive(runner))) return;
  for (const signal of ["SIGCONT", "SIGKILL"] as const) {
    try {
      Deno.kill(runner.pid, signal);
    } catch {
      // Gone meanwhile.
    }
  }
  await waitFor(
    "the killed runner to go",
    async () => !(await runnerAlive(runner)),
  );
}

/**
 * Continues a runner the test stopped. One that is gone meanwhile is left
 * for the test's own assertions to explain.
 */
export function continueRunner(runner: RunnerProcess): void {
  try {
    Deno.kill(runner.pid, "SIGCONT");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
}
