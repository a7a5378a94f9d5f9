/**
 * A process's descendants, read from `/proc` (Linux) through `sh` and
 * `cat` (Deno refuses `/proc` short of `--allow-all`), and the killing of
 * those still alive. An agent CLI may start tools in a session of their own
 * (Gemini CLI's shell commands), out of reach of a signal to its process
 * group: the runner records the tree before it interrupts the CLI, and
 * kills what outlived it.
 *
 * @module
 */

import { runProcess } from "./run_process.ts";

/** A process as `/proc/<pid>/stat` describes it. */
export interface ProcessEntry {
  /** Its pid. */
  pid: number;
  /** Its parent's pid. */
  ppid: number;
  /** Its start time in clock ticks since boot: with the pid, unique. */
  start: string;
  /** Its state letter (`Z`: a zombie). */
  state: string;
}

/** Parses one `/proc/<pid>/stat` line, or `null`. */
export function parseProcStat(line: string): ProcessEntry | null {
  const close = line.lastIndexOf(") ");
  if (close < 0) return null;
  const pid = Number(line.slice(0, line.indexOf(" ")));
  const fields = line.slice(close + 2).split(" ");
  const ppid = Number(fields[1]);
  const start = fields[19];
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !start) return null;
  return { pid, ppid, start, state: fields[0] ?? "?" };
}

async function readTable(): Promise<ProcessEntry[]> {
  if (Deno.build.os !== "linux") return [];
  const result = await runProcess("sh", {
    args: ["-c", "cat /proc/[0-9]*/stat 2>/dev/null; true"],
    timeoutMs: 5000,
    maxBytes: 16 << 20,
  });
  if (result.state !== "exited") return [];
  return result.stdout.split("\n").map(parseProcStat).filter((
    entry,
  ): entry is ProcessEntry => entry !== null);
}

/**
 * The living descendants of `root` (not `root` itself), whatever their
 * session or process group.
 *
 * @returns An empty list where `/proc` cannot be read.
 */
export async function descendantsOf(root: number): Promise<ProcessEntry[]> {
  const table = await readTable();
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const list = children.get(entry.ppid) ?? [];
    list.push(entry);
    children.set(entry.ppid, list);
  }
  const found: ProcessEntry[] = [];
  const queue = [root];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (child.state === "Z" || found.some((e) => e.pid === child.pid)) {
        continue;
      }
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/**
 * Sends SIGKILL to each process of `entries` that still runs (same pid and
 * start time: a reused pid is left alone).
 *
 * @returns The pids killed.
 */
export async function killSurvivors(
  entries: readonly ProcessEntry[],
): Promise<number[]> {
  if (entries.length === 0) return [];
  const living = new Map(
    (await readTable()).filter((e) => e.state !== "Z").map((e) => [e.pid, e]),
  );
  const killed: number[] = [];
  for (const entry of entries) {
    if (living.get(entry.pid)?.start !== entry.start) continue;
    try {
      Deno.kill(entry.pid, "SIGKILL");
      killed.push(entry.pid);
    } catch {
      // Gone in the meantime.
    }
  }
  return killed;
}
