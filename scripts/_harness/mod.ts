/**
 * Shared parts of the endurance scripts (`soak/`, `fuzz/`,
 * `fuzz_dashboard/`): the CLI as a child process, a seeded random source,
 * violation bookkeeping, flag parsing, a look for processes left behind,
 * and number formatting. The rest of this folder is what the scripts and
 * the tests share (the tests' helpers re-export it): lines of a child's
 * output, the CLI's argv, git work trees, serve's root key and inspector,
 * and a headless Chromium.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { cliArgs } from "./cli.ts";
import { LineReader, readAll } from "./lines.ts";
import { ExitCode } from "../../lib/shared/errors.ts";

export { LineReader, readAll };

/** What a finished CLI process left. */
export interface CliResult {
  /** The exit code (`null` when a signal ended it). */
  code: number;
  /** The signal that ended it, if any. */
  signal: Deno.Signal | null;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/**
 * Starts `prompt_runner ARGS` with NO_COLOR, no stdin, stdout and stderr
 * piped. With `nice`, the process runs at that niceness (through `nice`),
 * so a crowd of clients on a small machine leaves the runner its share.
 */
export function spawnCli(
  args: string[],
  options: { stdout?: "piped" | "null"; cwd?: string; nice?: number } = {},
): Deno.ChildProcess {
  const argv = [Deno.execPath(), ...cliArgs(args)];
  if (options.nice !== undefined) {
    argv.unshift("nice", "-n", String(options.nice));
  }
  return new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: options.stdout ?? "piped",
    stderr: "piped",
  }).spawn();
}

/** Runs `prompt_runner ARGS` to completion. */
export async function runCli(args: string[]): Promise<CliResult> {
  const child = spawnCli(args);
  const [stdout, stderr, status] = await Promise.all([
    readAll(child.stdout),
    readAll(child.stderr),
    child.status,
  ]);
  return { code: status.code, signal: status.signal, stdout, stderr };
}

/** A small seeded random source (mulberry32): the same seed, the same choices. */
export class Rng {
  #state: number;

  /** Seeds the source. */
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** A whole number in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A number in [min, max). */
  between(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One of `items`. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `n` random bytes. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }
}

/** Violations found, by check; the first few of each are kept word for word. */
export class Violations {
  readonly #byCheck = new Map<string, { count: number; examples: string[] }>();
  readonly #cap: number;

  /** Keeps up to `cap` examples per check. */
  constructor(cap = 8) {
    this.#cap = cap;
  }

  /** Records one violation of `check`. */
  add(check: string, detail: string): void {
    const entry = this.#byCheck.get(check) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < this.#cap) entry.examples.push(detail);
    this.#byCheck.set(check, entry);
  }

  /** How many violations in all. */
  get count(): number {
    let total = 0;
    for (const entry of this.#byCheck.values()) total += entry.count;
    return total;
  }

  /** How many violations of one check. */
  countOf(check: string): number {
    return this.#byCheck.get(check)?.count ?? 0;
  }

  /** The checks that fired. */
  get checks(): string[] {
    return [...this.#byCheck.keys()];
  }

  /** One line per example, grouped by check, with the count of each. */
  report(): string[] {
    const lines: string[] = [];
    for (const [check, entry] of this.#byCheck) {
      lines.push(`  ${check}: ${entry.count}`);
      for (const example of entry.examples) lines.push(`    - ${example}`);
      if (entry.count > entry.examples.length) {
        lines.push(`    … ${entry.count - entry.examples.length} more`);
      }
    }
    return lines;
  }
}

/** `1234567` → `1,234,567`. */
export function formatCount(n: number): string {
  return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The flags both scripts take. */
export interface ScriptFlags {
  /** The short run the tests use. */
  quick: boolean;
  /** How long to run, in seconds. */
  seconds: number;
  /** The random seed. */
  seed: number;
  /** Keep the temporary directory (for looking at a failure). */
  keep: boolean;
  /** Other numeric flags, by name. */
  numbers: Record<string, number>;
}

/**
 * Parses `--quick`, `--seconds N`, `--seed N`, `--keep` and the numeric
 * flags named in `extra` (with their full and quick defaults).
 */
export function parseScriptFlags(
  argv: string[],
  defaults: { seconds: number; quickSeconds: number },
  extra: Record<string, { full: number; quick: number }> = {},
): ScriptFlags {
  const options: Record<string, { type: "string" | "boolean" }> = {
    quick: { type: "boolean" },
    keep: { type: "boolean" },
    seconds: { type: "string" },
    seed: { type: "string" },
  };
  for (const name of Object.keys(extra)) options[name] = { type: "string" };
  const { values } = parseArgs({ args: argv, options, strict: true });
  const quick = values.quick === true;
  const number = (name: string, fallback: number): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) {
      throw new Error(`--${name} needs a number >= 0, not ${raw}`);
    }
    return n;
  };
  const numbers: Record<string, number> = {};
  for (const [name, value] of Object.entries(extra)) {
    numbers[name] = number(name, quick ? value.quick : value.full);
  }
  return {
    quick,
    seconds: number(
      "seconds",
      quick ? defaults.quickSeconds : defaults.seconds,
    ),
    seed: number("seed", Math.floor(Math.random() * 2 ** 31)),
    keep: values.keep === true,
    numbers,
  };
}

interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  args: string;
  cwd: string | null;
}

async function output(command: string, args: string[]): Promise<
  { pid: number; text: string }
> {
  const child = new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const { stdout } = await child.output();
  return { pid: child.pid, text: new TextDecoder().decode(stdout) };
}

/** Every process: `ps` for ids and command lines, `/proc` for working directories. */
async function listProcesses(): Promise<{ list: ProcInfo[]; own: number[] }> {
  // Deno refuses to read /proc itself without --allow-all; bash may.
  const cwds = await output("bash", [
    "-c",
    'for p in /proc/[0-9]*; do c=$(readlink "$p/cwd" 2>/dev/null) && printf "%s\\t%s\\n" "${p#/proc/}" "$c"; done',
  ]);
  const ps = await output("ps", ["-eo", "pid=,ppid=,pgid=,stat=,args="]);
  const cwd = new Map<number, string>();
  for (const line of cwds.text.split("\n")) {
    const [pid, path] = line.split("\t");
    if (pid && path) cwd.set(Number(pid), path);
  }
  const list: ProcInfo[] = [];
  for (const line of ps.text.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s*(.*)$/.exec(line);
    if (match === null) continue;
    const pid = Number(match[1]);
    list.push({
      pid,
      ppid: Number(match[2]),
      pgid: Number(match[3]),
      state: match[4]!,
      args: match[5] ?? "",
      cwd: cwd.get(pid) ?? null,
    });
  }
  return { list, own: [cwds.pid, ps.pid] };
}

/**
 * Processes this script left behind: our children (zombies included), and
 * any process of our process group whose command line or working
 * directory lies in `dir` (the runner's `git` children outlive it when it
 * is killed). Waits up to `graceMs` for them to go.
 */
export async function leftoverProcesses(
  dir: string,
  graceMs = 5000,
): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const { list, own } = await listProcesses();
    const self = list.find((p) => p.pid === Deno.pid);
    const found = list.filter((p) =>
      p.pid !== Deno.pid && !own.includes(p.pid) &&
      (p.ppid === Deno.pid ||
        (self !== undefined && p.pgid === self.pgid &&
          (p.args.includes(dir) ||
            (p.cwd !== null && p.cwd.startsWith(dir)))))
    ).map((p) =>
      `pid ${p.pid} (ppid ${p.ppid}, pgid ${p.pgid}, ${p.state}${
        p.cwd ? `, in ${p.cwd}` : ""
      }): ${p.args.slice(0, 160) || "(no command line)"}`
    );
    if (found.length === 0 || Date.now() >= deadline) return found;
    await sleep(200);
  }
}

/** A file's content as a SHA-256 hex digest. */
export async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    bytes as Uint8Array<ArrayBuffer>,
  );
  return Array.from(
    new Uint8Array(digest),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/**
 * Prints the violations, if any (a `violations:` line, then the report);
 * returns the script's exit code: 1 when there are any, else 0.
 */
export function reportViolations(violations: Violations): number {
  if (violations.count === 0) return 0;
  // deno-lint-ignore no-console
  console.log("violations:");
  // deno-lint-ignore no-console
  for (const line of violations.report()) console.log(line);
  return 1;
}

/**
 * Makes SIGINT end the script cleanly: `stop` ends what it started, its
 * temporary directory `dir` is removed (unless `keep`), and it exits 130.
 * Returns what removes the listener again.
 */
export function onInterrupt(
  dir: string,
  keep: boolean,
  stop: () => Promise<void> | undefined,
): () => void {
  const onSignal = (): void => {
    Promise.resolve(stop()).finally(async () => {
      if (!keep) await Deno.remove(dir, { recursive: true }).catch(() => {});
      Deno.exit(ExitCode.SIGINT);
    });
  };
  Deno.addSignalListener("SIGINT", onSignal);
  return () => Deno.removeSignalListener("SIGINT", onSignal);
}

/** At a script's end: removes its temporary directory, or says it kept it. */
export async function leaveScratch(
  label: string,
  dir: string,
  keep: boolean,
): Promise<void> {
  // deno-lint-ignore no-console
  if (keep) console.error(`${label}: kept ${dir}`);
  else await Deno.remove(dir, { recursive: true }).catch(() => {});
}
