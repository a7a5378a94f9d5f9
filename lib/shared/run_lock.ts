/**
 * The run lock: one live run per state root, held with a kernel lock so a
 * lock left by a dead process is taken over atomically.
 *
 * @module
 */

import { join } from "./posix_path.ts";
import { errorText, StateError } from "./errors.ts";
import {
  createNewFile,
  openExisting,
  readTextIfExists,
  syncDir,
  writeAll,
} from "./files.ts";
import { ownProc } from "./_own_proc.ts";
import { runProcess } from "./run_process.ts";
import { STATE_ROOT_NAMES } from "./state_root_layout.ts";

/** The content of `run.lock`. */
export interface RunLockInfo {
  /** The runner's process id. */
  pid: number;
  /** The process start time (from `/proc/<pid>/stat`), or `null` when unknown. */
  pid_start: string | null;
  /** The host the runner runs on. */
  host: string;
  /** The run holding the lock. */
  run_id: string;
  /** When the lock was taken (ISO 8601). */
  started_at: string;
  /**
   * The fleet the run publishes to (DESIGN §12), its URL's secrets masked;
   * absent when it joined none.
   */
  fleet?: string;
}

/** The lock file's name inside a state root. */
export const LOCK_FILE = STATE_ROOT_NAMES.lock;

/**
 * Reads `/proc/<pid>/stat`. Deno refuses `/proc` to anything short of
 * `--allow-all`, so the file is read by `cat` (`--allow-run`).
 *
 * @returns The line; `null` when the process does not exist; `undefined`
 * when this system cannot tell (no `/proc`, no `cat`).
 */
async function readProcStat(pid: number): Promise<string | null | undefined> {
  if (Deno.build.os !== "linux") return undefined;
  const result = await runProcess("cat", {
    args: [`/proc/${pid}/stat`],
    timeoutMs: 5000,
  });
  if (result.state !== "exited") return undefined;
  if (result.code === 0) return result.stdout;
  return /No such file/i.test(result.stderr) ? null : undefined;
}

/**
 * Reads a process's start time from `/proc`, which tells a live process from
 * a new one that reused its pid.
 */
export async function processStartTime(pid: number): Promise<string | null> {
  const stat = pid === Deno.pid
    ? (await ownProc())?.stat
    : await readProcStat(pid);
  if (!stat) return null;
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  // Field 22 of the whole line is field 20 after "pid (comm) ".
  return fields[19] ?? null;
}

/**
 * Whether `pid` runs: `dead` when it is gone, a zombie, or (with `start`)
 * another process that started at another time.
 */
async function processState(
  pid: number,
  start: string | null = null,
): Promise<"alive" | "dead" | "unknown"> {
  const stat = await readProcStat(pid);
  if (stat === undefined) {
    if (Deno.build.os === "linux") return "unknown";
    const probe = await runProcess("kill", {
      args: ["-0", String(pid)],
      timeoutMs: 5000,
    });
    if (probe.state !== "exited") return "unknown";
    return probe.code === 0 ? "alive" : "dead";
  }
  if (stat === null) return "dead";
  const fields = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
  const state = fields[0];
  if (start !== null && fields[19] !== start) return "dead";
  return state === "Z" || state === "X" || state === "x" ? "dead" : "alive";
}

/**
 * Tells whether a process of this host is running (a zombie counts as
 * ended), or `null` when this system cannot tell. With `start` (its start
 * time, as {@linkcode processStartTime} read it), a process that now has
 * the pid but started at another time is another process: not running.
 */
export async function processAlive(
  pid: number,
  start: string | null = null,
): Promise<boolean | null> {
  const state = await processState(pid, start);
  return state === "unknown" ? null : state === "alive";
}

/** This machine's host name, or `unknown` without `--allow-sys=hostname,uid`. */
export function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

/**
 * Tells whether the process that wrote a lock is still running: same host,
 * pid alive, and the same start time (so a reused pid does not count).
 * A lock from another host is assumed live, since it cannot be checked.
 */
export async function isLockAlive(info: RunLockInfo): Promise<boolean> {
  if (info.host !== hostname()) return true;
  const state = await processState(info.pid);
  if (state === "dead") return false;
  if (state === "unknown") return true;
  if (info.pid_start === null) return true;
  return (await processStartTime(info.pid)) === info.pid_start;
}

function parseLock(text: string): RunLockInfo | null {
  try {
    const value = JSON.parse(text);
    if (
      typeof value === "object" && value !== null &&
      Number.isInteger(value.pid) && typeof value.run_id === "string"
    ) {
      return {
        pid: value.pid,
        pid_start: typeof value.pid_start === "string" ? value.pid_start : null,
        host: typeof value.host === "string" ? value.host : "unknown",
        run_id: value.run_id,
        started_at: typeof value.started_at === "string"
          ? value.started_at
          : "",
        ...(typeof value.fleet === "string" ? { fleet: value.fleet } : {}),
      };
    }
  } catch {
    // Torn or foreign content: treated as no owner.
  }
  return null;
}

/**
 * Whether a process holds the kernel lock of an open `run.lock`. A shared
 * lock is tried and let go at once: it cannot succeed while a runner holds
 * its exclusive lock, and probes never exclude one another. A runner taking
 * the lock retries past a probe (see {@linkcode acquireRunLock}).
 */
function lockHeld(file: Deno.FsFile): boolean {
  if (!file.tryLockSync(false)) return true;
  file.unlockSync();
  return false;
}

/**
 * Reads the lock of a state root and tells whether its holder is alive:
 * on this host the kernel lock answers (a dead runner's lock went with it,
 * and a reused pid cannot hold it), with no process to start; a lock from
 * another host is assumed live, since it cannot be checked.
 *
 * Requires `--allow-read` on the state root.
 *
 * @returns The lock and its liveness, or `null` when there is no lock.
 * @throws {LinkRefusedError} when `run.lock` is a link.
 */
export async function readRunLock(
  stateRoot: string,
): Promise<{ info: RunLockInfo | null; alive: boolean } | null> {
  const file = await openExisting(join(stateRoot, LOCK_FILE), {
    within: stateRoot,
  });
  if (file === null) return null;
  let held: boolean;
  let text: string;
  try {
    held = lockHeld(file);
    text = await new Response(file.readable).text();
  } catch (error) {
    try {
      file.close();
    } catch {
      // Closed by the stream already.
    }
    throw error;
  }
  const info = parseLock(text);
  if (info === null) return { info, alive: false };
  return { info, alive: info.host !== hostname() || held };
}

/** A held run lock. */
export interface RunLock {
  /** What the lock file says. */
  readonly info: RunLockInfo;
  /** Removes the lock file, if it is still ours, and lets the lock go. */
  release(): Promise<void>;
}

function lockedError(
  stateRoot: string,
  holder: RunLockInfo | null,
): StateError {
  const who = holder === null
    ? "another process (its lock file is still being written)"
    : `run ${holder.run_id} (pid ${holder.pid} on ${holder.host}, started ${holder.started_at})`;
  return new StateError(
    `Cannot start a run: state root "${stateRoot}" is locked by ${who}`,
    {
      code: "RUN_LOCKED",
      hint:
        "Wait for that run to finish, or stop it; follow it with `prompt_runner control status`",
    },
  );
}

/**
 * Reads who holds a lock another process has just taken: its record may
 * still be the previous holder's for a moment, so a dead holder is read
 * again for up to a second.
 */
async function readHolder(path: string): Promise<RunLockInfo | null> {
  let holder: RunLockInfo | null = null;
  for (let look = 0; look < 10; look++) {
    holder = parseLock((await readTextIfExists(path).catch(() => null)) ?? "");
    if (
      holder !== null && holder.pid !== Deno.pid && await isLockAlive(holder)
    ) {
      return holder;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return holder;
}

/**
 * Takes the exclusive kernel lock of an open `run.lock`. A follower's probe
 * holds a shared lock for an instant: when only shared locks stand in the
 * way (a shared lock can be had), it tries again rather than refuse.
 *
 * @returns `false` when another process holds the exclusive lock.
 */
async function takeExclusive(file: Deno.FsFile): Promise<boolean> {
  for (let tries = 0; tries < 500; tries++) {
    if (file.tryLockSync(true)) return true;
    if (!file.tryLockSync(false)) return false;
    file.unlockSync();
    await new Promise((resolve) => setTimeout(resolve, tries < 10 ? 0 : 2));
  }
  return false;
}

/**
 * Takes the run lock of a state root: `run.lock` is held with a kernel lock
 * (`flock`) for as long as the run lives, so exactly one process holds it,
 * and a lock left by a dead process (its kernel lock went with it) is taken
 * over atomically. The file records who holds it, for readers.
 *
 * @param stateRoot The state root directory (it must exist).
 * @param runId The run taking the lock.
 * @param fleet The fleet the run publishes to, its secrets masked.
 * @returns The held lock.
 * @throws {StateError} naming the holder when another live run holds it,
 * or when the lock cannot be written (a full disk).
 * @throws {LinkRefusedError} when `run.lock` is a symbolic link.
 */
export async function acquireRunLock(
  stateRoot: string,
  runId: string,
  fleet?: string,
): Promise<RunLock> {
  const path = join(stateRoot, LOCK_FILE);
  const info: RunLockInfo = {
    pid: Deno.pid,
    pid_start: await processStartTime(Deno.pid),
    host: hostname(),
    run_id: runId,
    started_at: new Date().toISOString(),
    ...(fleet === undefined ? {} : { fleet }),
  };
  const text = JSON.stringify(info) + "\n";
  for (let tries = 0; tries < 20; tries++) {
    let file: Deno.FsFile;
    try {
      file = await openExisting(path, {
        read: true,
        write: true,
        within: stateRoot,
      }) ?? await createNewFile(path, { within: stateRoot });
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists) continue;
      if (error instanceof StateError && error.code === "NOT_A_FILE") {
        throw new StateError(
          `Cannot start a run: "${path}" is not a regular file`,
          {
            code: "RUN_LOCK_INVALID",
            hint: "Remove it; the runner recreates it",
          },
        );
      }
      throw error;
    }
    let held = false;
    try {
      if (!(await takeExclusive(file))) {
        throw lockedError(stateRoot, await readHolder(path));
      }
      // The holder we waited on may have removed the file as it let go:
      // only the file still named run.lock counts.
      const named = await Deno.lstat(path).catch(() => null);
      const opened = await file.stat();
      if (
        named === null || named.isSymlink || named.ino !== opened.ino ||
        named.dev !== opened.dev
      ) {
        continue;
      }
      const previous = parseLock(
        (await readTextIfExists(path, { within: stateRoot })) ?? "",
      );
      if (previous !== null && previous.host !== info.host) {
        // A kernel lock does not reach across hosts: trust the record.
        throw lockedError(stateRoot, previous);
      }
      try {
        await file.truncate(0);
        await writeAll(file, new TextEncoder().encode(text));
        await file.sync();
      } catch (error) {
        await Deno.remove(path).catch(() => {});
        throw new StateError(
          `Cannot start a run: cannot write the lock "${path}": ${
            errorText(error)
          }`,
          { code: "STATE_UNWRITABLE", cause: error },
        );
      }
      await syncDir(stateRoot);
      held = true;
      return {
        info,
        async release(): Promise<void> {
          try {
            const named = await Deno.lstat(path).catch(() => null);
            const opened = await file.stat();
            const content = await readTextIfExists(path).catch(() => null);
            if (
              named !== null && named.ino === opened.ino && content === text
            ) {
              await Deno.remove(path).catch(() => {});
            }
          } catch {
            // Best effort: the kernel lock goes with the file handle anyway.
          } finally {
            try {
              file.close();
            } catch {
              // Already closed.
            }
          }
        },
      };
    } finally {
      if (!held) {
        try {
          file.close();
        } catch {
          // Already closed.
        }
      }
    }
  }
  throw new StateError(
    `Cannot start a run: the lock of state root "${stateRoot}" keeps changing hands`,
    { code: "RUN_LOCK_CONTENDED" },
  );
}
