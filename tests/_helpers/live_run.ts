/**
 * A runner process for multi-process tests: started with `run --json`, its
 * events read line by line, stopped and awaited at the end.
 *
 * @module
 */

import { readSnapshotFile as readSnapshot } from "../../scripts/_audit/mod.ts";
import { LineReader, readAll } from "./lines.ts";
import { type RunCliOptions, spawnCli, waitFor } from "./run_cli.ts";

/** Reads a state root's snapshot, or `null`. */
export { readSnapshot };

/** A runner running in the background. */
export interface LiveRun extends AsyncDisposable {
  /** The process. */
  child: Deno.ChildProcess;
  /** Its stdout (NDJSON events), line by line. */
  lines: LineReader;
  /** Reads events until one satisfies `match`, and returns it. */
  until(
    match: (event: Record<string, unknown>) => boolean,
  ): Promise<Record<string, unknown>>;
  /** Reads the rest of stdout and stderr and the exit status. */
  finish(): Promise<
    {
      code: number;
      signal: Deno.Signal | null;
      events: Record<string, unknown>[];
      stderr: string;
    }
  >;
}

/** Starts `prompt_runner run PACKET --json ...args`. */
export function startRun(
  packetDir: string,
  args: string[] = [],
  options: RunCliOptions = {},
): LiveRun {
  const child = spawnCli(["run", packetDir, "--json", ...args], options);
  const lines = new LineReader(child.stdout);
  const stderr = readAll(child.stderr);
  let finished: ReturnType<LiveRun["finish"]> | null = null;
  const finish = (): ReturnType<LiveRun["finish"]> => {
    finished ??= (async () => {
      await lines.rest();
      const status = await child.status;
      return {
        code: status.code,
        signal: status.signal,
        events: [...lines.seen].filter((l) => l.startsWith("{")).map((l) =>
          JSON.parse(l)
        ),
        stderr: await stderr,
      };
    })();
    return finished;
  };
  return {
    child,
    lines,
    async until(
      match: (event: Record<string, unknown>) => boolean,
    ): Promise<Record<string, unknown>> {
      const line = await lines.until((l) => {
        try {
          return match(JSON.parse(l));
        } catch {
          return false;
        }
      });
      return JSON.parse(line);
    },
    finish,
    async [Symbol.asyncDispose](): Promise<void> {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
      await finish();
    },
  };
}

/** Waits until the snapshot satisfies `match`. */
export async function waitForSnapshot(
  stateRoot: string,
  what: string,
  match: (snapshot: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  return await waitFor(what, async () => {
    const snapshot = await readSnapshot(stateRoot);
    return snapshot !== null && match(snapshot) ? snapshot : null;
  });
}

/** Reads a JSONL file's objects (none when it does not exist). */
export async function readJsonl(
  path: string,
): Promise<Record<string, unknown>[]> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter(Boolean).map((
      l,
    ) => JSON.parse(l));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** Lists a directory's entry names (none when it does not exist). */
export async function listDir(path: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(path))).map((e) => e.name)
      .sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}
