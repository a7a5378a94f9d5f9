/**
 * A process's figures from /proc, read with `cat` (Deno reads /proc only
 * with --allow-all): its CPU seconds and its resident memory.
 *
 * @module
 */

/** Linux's USER_HZ, the unit of /proc/PID/stat's times. */
const CLOCK_TICKS = 100;

/** A file of a process's under /proc; empty once the process is gone. */
export async function procFile(pid: number, name: string): Promise<string> {
  const output = await new Deno.Command("cat", {
    args: [`/proc/${pid}/${name}`],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(output.stdout);
}

/** The CPU seconds (user + system) processes have used so far, summed. */
export async function cpuSeconds(pids: number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    // Fields 14 and 15 of /proc/PID/stat, after the parenthesised name.
    const text = await procFile(pid, "stat");
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    ticks += Number(fields[11] ?? 0) + Number(fields[12] ?? 0);
  }
  return ticks / CLOCK_TICKS;
}

/** A process's VmRSS (MiB), or `null` when it cannot be read (the process is gone). */
export async function vmRssMib(pid: number): Promise<number | null> {
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(await procFile(pid, "status"))?.[1];
  return kb === undefined ? null : Number(kb) / 1024;
}
