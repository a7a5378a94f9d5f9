/**
 * Process trees from `/proc` (Linux): the descendants of a process, a watch
 * that keeps collecting them while a test runs (a grandchild may live only
 * briefly), and which of them are still alive afterwards. A zombie counts
 * as dead, and a pid reused by an unrelated process is not mistaken for the
 * one recorded (its start time differs).
 *
 * @module
 */

/** One `/proc/<pid>/stat` line, the fields we need. */
interface ProcStat {
  pid: number;
  ppid: number;
  state: string;
  /** Start time in clock ticks since boot: a pid plus this is unique. */
  start: string;
}

/**
 * Reads `/proc/<pid>/stat` for `pids` (all when `null`) through `cat`: Deno
 * grants `/proc` only with `--allow-all`, and tests run with `--allow-run`.
 */
function readStats(pids: number[] | null): ProcStat[] {
  if (pids !== null && pids.length === 0) return [];
  const files = pids === null
    ? "/proc/[0-9]*/stat"
    : pids.map((pid) => `/proc/${pid}/stat`).join(" ");
  const output = new Deno.Command("bash", {
    args: ["-c", `cat ${files} 2>/dev/null; true`],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const stats: ProcStat[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const stat = parseStat(line);
    if (stat) stats.push(stat);
  }
  return stats;
}

function parseStat(line: string): ProcStat | null {
  // The command name is in parentheses and may hold spaces or parentheses.
  const open = line.indexOf(" (");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return null;
  const pid = Number(line.slice(0, open));
  const fields = line.slice(close + 2).split(" ");
  // fields[0] is field 3 (state); field 4 is ppid, field 22 the start time.
  const ppid = Number(fields[1]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid)) return null;
  return { pid, ppid, state: fields[0] ?? "?", start: fields[19] ?? "" };
}

function descendantStats(rootPid: number): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const stat of readStats(null)) {
    const list = children.get(stat.ppid) ?? [];
    list.push(stat);
    children.set(stat.ppid, list);
  }
  const found: ProcStat[] = [];
  const queue = [rootPid];
  const seen = new Set<number>(queue);
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** The pids of every living descendant of `rootPid` (not `rootPid` itself). */
export function descendantPids(rootPid: number): number[] {
  return descendantStats(rootPid)
    .filter((stat) => stat.state !== "Z")
    .map((stat) => stat.pid);
}

/** Which of `pids` are alive (a zombie is dead). */
export function livingPids(pids: Iterable<number>): number[] {
  return readStats([...pids]).filter((stat) => stat.state !== "Z")
    .map((stat) => stat.pid);
}

/** A watch on a process's descendants. */
export interface DescendantWatch {
  /** Every descendant seen so far. */
  readonly pids: ReadonlySet<number>;
  /** Stops polling (after one last look) and returns every pid seen. */
  stop(): Promise<Set<number>>;
  /** The descendants seen that are still alive: same pid, same start time. */
  alive(): number[];
}

/**
 * Polls `rootPid`'s descendants every ~50 ms until stopped, collecting each
 * pid seen (and its start time, so `alive()` ignores a reused pid).
 */
export function watchDescendants(rootPid: number): DescendantWatch {
  const starts = new Map<number, string>();
  const look = (): void => {
    for (const stat of descendantStats(rootPid)) {
      if (!starts.has(stat.pid)) starts.set(stat.pid, stat.start);
    }
  };
  look();
  const timer = setInterval(look, 50);
  let stopped = false;
  return {
    get pids(): ReadonlySet<number> {
      return new Set(starts.keys());
    },
    stop(): Promise<Set<number>> {
      if (!stopped) {
        stopped = true;
        clearInterval(timer);
        look();
      }
      return Promise.resolve(new Set(starts.keys()));
    },
    alive(): number[] {
      return readStats([...starts.keys()])
        .filter((stat) =>
          stat.state !== "Z" && stat.start === starts.get(stat.pid)
        )
        .map((stat) => stat.pid);
    },
  };
}

/** A process's start time (field 22 of its stat), or `null` when it is gone. */
export function processStart(pid: number): string | null {
  const [stat] = readStats([pid]);
  return stat === undefined || stat.state === "Z" ? null : stat.start;
}

/** Processes a test started or found, killed when it ends, however it ends. */
export interface ProcessReaper extends AsyncDisposable {
  /**
   * Remembers a process, by pid and start time, to kill at the end (a pid
   * already gone is ignored); returns the pid.
   */
  track(pid: number): number;
  /** Which of `pids` (all tracked when omitted) still run as tracked: same pid, same start. */
  alive(pids?: number[]): number[];
}

/**
 * A reaper: `await using` it, `track()` each process a test starts or finds,
 * and every one still alive (same start time, so a reused pid is spared) is
 * sent SIGCONT and SIGKILL when the test ends.
 */
export function processReaper(): ProcessReaper {
  const tracked = new Map<number, string>();
  const alive = (pids?: number[]): number[] =>
    readStats(pids ?? [...tracked.keys()]).filter((stat) =>
      stat.state !== "Z" && tracked.has(stat.pid) &&
      tracked.get(stat.pid) === stat.start
    ).map((stat) => stat.pid);
  return {
    track(pid: number): number {
      const start = processStart(pid);
      if (start !== null && !tracked.has(pid)) tracked.set(pid, start);
      return pid;
    },
    alive,
    async [Symbol.asyncDispose](): Promise<void> {
      for (const pid of alive()) {
        for (const signal of ["SIGCONT", "SIGKILL"] as const) {
          try {
            Deno.kill(pid, signal);
          } catch {
            // Gone meanwhile.
          }
        }
      }
      for (let look = 0; look < 100 && alive().length > 0; look++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}
