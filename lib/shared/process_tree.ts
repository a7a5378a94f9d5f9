/**
 * A process's descendants, read from `/proc` (Linux) through `sh` and
 * `cat` (Deno refuses `/proc` short of `--allow-all`), and the stopping of
 * those still alive. An agent CLI may start tools in a session of their own
 * (Gemini CLI's shell commands), out of reach of a signal to its process
 * group, and such a tool outlives the CLI, adopted by init, out of any tree
 * walk. So the runner records the tree before it interrupts the CLI, and
 * every agent CLI runs with {@linkcode AGENT_ID_VARIABLE} in its environment,
 * which the processes it starts inherit: whatever carries it when the
 * CLI's session ends (or when a runner killed mid-attempt is followed by
 * another) is the agent's and is stopped.
 *
 * @module
 */

import { runProcess } from "./run_process.ts";

/**
 * The environment variable each agent CLI runs with, set to an id of its
 * own (random, one per CLI process) that the processes it starts inherit.
 */
export const AGENT_ID_VARIABLE = "PROMPT_RUNNER_AGENT_ID";

/** A process as `/proc/<pid>/stat` describes it. */
export interface ProcessEntry {
  /** Its pid. */
  pid: number;
  /** Its parent's pid. */
  ppid: number;
  /** Its process group. */
  pgid: number;
  /** Its start time in clock ticks since boot: with the pid, unique. */
  start: string;
  /** Its state letter (`Z`: a zombie). */
  state: string;
  /** Its command name (at most 15 bytes, as the process set it). */
  name: string;
}

/** Parses one `/proc/<pid>/stat` line, or `null`. */
export function parseProcStat(line: string): ProcessEntry | null {
  const open = line.indexOf(" (");
  const close = line.lastIndexOf(") ");
  if (open < 0 || close < open) return null;
  const pid = Number(line.slice(0, open));
  const fields = line.slice(close + 2).split(" ");
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const start = fields[19];
  if (
    !Number.isInteger(pid) || !Number.isInteger(ppid) ||
    !Number.isInteger(pgid) || !/^\d+$/.test(start ?? "")
  ) {
    return null;
  }
  return {
    pid,
    ppid,
    pgid,
    start: start!,
    state: fields[0] ?? "?",
    name: line.slice(open + 2, close),
  };
}

/**
 * A process as messages name it: `PID (NAME)`, or `PID (NAME, DETAIL)`,
 * the name made printable.
 */
export function describeProcess(entry: ProcessEntry, detail?: string): string {
  const name = entry.name.replace(/[^\x20-\x7e]/g, "?");
  return `${entry.pid} (${name}${detail === undefined ? "" : `, ${detail}`})`;
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

/** The living descendants of each of `roots` in `table` (not the roots). */
function descendantsIn(
  table: readonly ProcessEntry[],
  roots: readonly number[],
): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of table) {
    const list = children.get(entry.ppid) ?? [];
    list.push(entry);
    children.set(entry.ppid, list);
  }
  const found = new Map<number, ProcessEntry>();
  const queue = [...roots];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const child of children.get(next) ?? []) {
      if (child.state === "Z" || found.has(child.pid)) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  for (const root of roots) found.delete(root);
  return [...found.values()];
}

/**
 * The living descendants of `root` (not `root` itself), whatever their
 * session or process group.
 *
 * @returns An empty list where `/proc` cannot be read.
 */
export async function descendantsOf(root: number): Promise<ProcessEntry[]> {
  return descendantsIn(await readTable(), [root]);
}

/**
 * The pids whose environment (as they started) holds `entry`
 * (`NAME=VALUE`), read through `grep` on `/proc/<pid>/environ`: only this
 * user's processes can be read.
 */
async function pidsWithEnv(entry: string): Promise<Set<number>> {
  if (Deno.build.os !== "linux") return new Set();
  const result = await runProcess("sh", {
    args: [
      "-c",
      'grep -lzxF -e "$1" /proc/[0-9]*/environ 2>/dev/null; true',
      "sh",
      entry,
    ],
    timeoutMs: 10_000,
    maxBytes: 4 << 20,
  });
  const pids = new Set<number>();
  if (result.state !== "exited") return pids;
  for (const match of result.stdout.matchAll(/^\/proc\/(\d+)\/environ$/gm)) {
    pids.add(Number(match[1]));
  }
  return pids;
}

/** An agent CLI process, as the runner recorded it when it started it. */
export interface AgentProcessRef {
  /** Its pid, which is also its process group id. */
  pid: number;
  /** Its start time (`null`: it could not be read: the pid is not trusted). */
  pid_start: string | null;
  /**
   * `NAME=VALUE` of {@linkcode AGENT_ID_VARIABLE} in its environment
   * (`null`: none recorded).
   */
  env: string | null;
}

/** This process and its ancestors: never an agent's, whatever they carry. */
function selfAndAncestors(table: readonly ProcessEntry[]): Set<number> {
  const byPid = new Map(table.map((entry) => [entry.pid, entry]));
  const own = new Set<number>();
  for (
    let pid: number | undefined = Deno.pid;
    pid !== undefined && pid > 0 && !own.has(pid);
    pid = byPid.get(pid)?.ppid
  ) {
    own.add(pid);
  }
  return own;
}

/**
 * Everything of an agent CLI process that still runs: the process itself
 * when its pid still has its start time (a reused pid is another
 * process's, and never touched), the rest of its process group, every
 * process whose environment carries its id (a tool in a session of its
 * own, even once adopted by init), and every descendant of those.
 *
 * @returns An empty list where `/proc` cannot be read.
 */
export async function agentProcesses(
  agent: AgentProcessRef,
): Promise<ProcessEntry[]> {
  const [table, marked] = await readAgentView(agent);
  return agentProcessesIn(table, marked, agent);
}

async function readAgentView(
  agent: AgentProcessRef,
): Promise<[ProcessEntry[], Set<number>]> {
  return await Promise.all([
    readTable(),
    agent.env === null ? Promise.resolve(new Set<number>()) : pidsWithEnv(
      agent.env,
    ),
  ]);
}

function agentProcessesIn(
  table: readonly ProcessEntry[],
  marked: ReadonlySet<number>,
  agent: AgentProcessRef,
): ProcessEntry[] {
  const living = table.filter((entry) => entry.state !== "Z");
  const own = selfAndAncestors(table);
  const found = new Map<number, ProcessEntry>();
  const add = (entry: ProcessEntry): void => {
    if (!own.has(entry.pid)) found.set(entry.pid, entry);
  };
  const start = agent.pid_start;
  const leader = living.find((entry) => entry.pid === agent.pid);
  if (start !== null && (leader === undefined || leader.start === start)) {
    // While anything is in the group, its id cannot be a new process's pid:
    // a member that started after the agent is the agent's.
    for (const entry of living) {
      if (
        entry.pgid === agent.pid && BigInt(entry.start) >= BigInt(start)
      ) {
        add(entry);
      }
    }
  }
  for (const entry of living) if (marked.has(entry.pid)) add(entry);
  for (const entry of descendantsIn(living, [...found.keys()])) add(entry);
  return [...found.values()];
}

/**
 * The processes an agent CLI left running when it ended, found by the id
 * in their environment (see {@linkcode agentProcesses}), with their
 * descendants.
 */
export async function agentLeftovers(env: string): Promise<ProcessEntry[]> {
  return await agentProcesses({ pid: 0, pid_start: null, env });
}

/**
 * Sends SIGKILL to each process of `entries` that still runs (same pid and
 * start time: a reused pid is left alone).
 *
 * @returns The processes killed.
 */
export async function killSurvivors(
  entries: readonly ProcessEntry[],
): Promise<ProcessEntry[]> {
  if (entries.length === 0) return [];
  const living = new Map(
    (await readTable()).filter((e) => e.state !== "Z").map((e) => [e.pid, e]),
  );
  const killed = new Map<number, ProcessEntry>();
  for (const entry of entries) {
    if (killed.has(entry.pid)) continue;
    if (living.get(entry.pid)?.start !== entry.start) continue;
    try {
      Deno.kill(entry.pid, "SIGKILL");
      killed.set(entry.pid, entry);
    } catch {
      // Gone in the meantime.
    }
  }
  return [...killed.values()];
}

/** A process stopped, and the last signal it needed. */
export interface StoppedProcess {
  /** The process. */
  process: ProcessEntry;
  /** `SIGTERM` when that ended it, else `SIGKILL`. */
  signal: "SIGTERM" | "SIGKILL";
}

/** What {@linkcode stopAgent} did. */
export interface StopReport {
  /** The processes it signalled that are gone. */
  stopped: StoppedProcess[];
  /** Those still running when it gave up. */
  left: ProcessEntry[];
}

/** Options for {@linkcode stopAgent}. */
export interface StopAgentOptions {
  /** How long SIGTERM is given before SIGKILL (default 3000 ms). */
  graceMs?: number;
  /** How long SIGKILL is given before giving up (default 5000 ms). */
  killWaitMs?: number;
}

const POLL_MS = 100;

/**
 * Stops everything of an agent CLI process that still runs (see
 * {@linkcode agentProcesses}): SIGTERM, a grace period, then SIGKILL to
 * what is left, looking again at every turn (a process it starts meanwhile
 * is stopped too), until nothing is left or the wait for SIGKILL is over.
 *
 * @returns What was stopped, and what still runs.
 */
export async function stopAgent(
  agent: AgentProcessRef,
  options: StopAgentOptions = {},
): Promise<StopReport> {
  const graceMs = options.graceMs ?? 3000;
  const killWaitMs = options.killWaitMs ?? 5000;
  const key = (entry: ProcessEntry): string => `${entry.pid}:${entry.start}`;
  const signalled = new Map<string, StoppedProcess>();
  // Found once, a process is followed by its pid and start time even when
  // it leaves the tree (its parent died) and carries no id.
  const look = async (): Promise<ProcessEntry[]> => {
    const [table, marked] = await readAgentView(agent);
    const found = agentProcessesIn(table, marked, agent);
    const living = new Map(
      table.filter((e) => e.state !== "Z").map((e) => [key(e), e]),
    );
    const all = new Map(found.map((e) => [key(e), e]));
    for (const id of signalled.keys()) {
      const entry = living.get(id);
      if (entry !== undefined) all.set(id, entry);
    }
    return [...all.values()];
  };
  const send = (
    entries: ProcessEntry[],
    signal: StoppedProcess["signal"],
  ): void => {
    for (const entry of entries) {
      const seen = signalled.get(key(entry));
      if (seen?.signal === signal) continue;
      try {
        Deno.kill(entry.pid, signal);
      } catch {
        // Gone in the meantime.
      }
      signalled.set(key(entry), { process: entry, signal });
    }
  };
  let running = await look();
  for (
    const [signal, waitMs] of [["SIGTERM", graceMs], [
      "SIGKILL",
      killWaitMs,
    ]] as const
  ) {
    const deadline = Date.now() + waitMs;
    while (running.length > 0) {
      send(running, signal);
      if (Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      running = await look();
    }
    if (running.length === 0) break;
  }
  const left = new Set(running.map(key));
  // The agent first, then by pid.
  const order = (a: ProcessEntry, b: ProcessEntry): number =>
    Number(b.pid === agent.pid) - Number(a.pid === agent.pid) ||
    a.pid - b.pid;
  return {
    stopped: [...signalled.entries()].filter(([id]) => !left.has(id)).map((
      [, stopped],
    ) => stopped).sort((a, b) => order(a.process, b.process)),
    left: running.sort(order),
  };
}
