/**
 * Watching a process tree from a test: every descendant of a process seen
 * while it runs, so a test can check that none outlives the run (a CLI's
 * tool child left behind after a timeout).
 *
 * @module
 */

/** The pid → parent pid table of every process, read with `ps`. */
async function processTable(): Promise<Map<number, number>> {
  const output = await new Deno.Command("ps", {
    args: ["-eo", "pid=,ppid=,stat="],
    stdout: "piped",
    stderr: "null",
  }).output();
  const table = new Map<number, number>();
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const [pid, ppid, stat] = line.trim().split(/\s+/);
    if (!pid || !ppid || stat?.startsWith("Z")) continue;
    table.set(Number(pid), Number(ppid));
  }
  return table;
}

/** The living descendants of `root` (not `root` itself). */
export async function descendants(root: number): Promise<number[]> {
  const table = await processTable();
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [pid, ppid] of table) {
      if (ppid === parent && !found.includes(pid)) {
        found.push(pid);
        queue.push(pid);
      }
    }
  }
  return found;
}

/** Whether a process lives (a zombie does not count). */
export async function alive(pid: number): Promise<boolean> {
  return (await processTable()).has(pid);
}

/** A watch over a process tree. */
export interface TreeWatch {
  /** Stops watching; resolves with every descendant pid seen. */
  stop(): Promise<number[]>;
}

/** Records every descendant of `root` every `intervalMs` until stopped. */
export function watchTree(root: number, intervalMs = 100): TreeWatch {
  const seen = new Set<number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const pid of await descendants(root)) seen.add(pid);
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop(): Promise<number[]> {
      running = false;
      await loop;
      return [...seen];
    },
  };
}

/** The pids among `pids` still alive, after giving them `graceMs` to go. */
export async function survivors(
  pids: number[],
  graceMs = 2000,
): Promise<number[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const table = await processTable();
    const left = pids.filter((pid) => table.has(pid));
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
