/**
 * Fake agent CLIs for what a real CLI cannot be made to do on demand: a
 * fake `amp` that replays the documented stream from a script, and fakes
 * that emit garbage, crash mid-line, or never end. Each is made in a test's
 * directory as one executable (`bin`) to name in a packet's `agent.bin`
 * (with `provider: amp`, so the amp parser reads it), with its own record
 * of the invocations it got.
 *
 * @module
 */

import { join } from "node:path";
import type { ScriptedReply } from "../model_server/server.ts";
import { writeExecutable } from "../executable.ts";

const HERE = import.meta.dirname!;

/** One invocation a fake recorded. */
export interface FakeInvocation {
  /** The process id. */
  pid: number;
  /** Its arguments (the bash fakes write a newline in one as `\n`). */
  argv: string[];
  /** Its working directory (the fake amp only; else `""`). */
  cwd: string;
}

/** A fake CLI made in a test's directory. */
export interface FakeCli {
  /** The executable to name in `agent.bin`. */
  bin: string;
  /** The directory holding its script and records. */
  dir: string;
  /** The invocations so far, oldest first. */
  invocations(): Promise<FakeInvocation[]>;
}

/** The fakes besides `amp`. */
export type FakeKind =
  | "garbage_lines"
  | "crash_midline"
  | "never_ends"
  | "leaves_behind";

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

async function writeWrapper(
  path: string,
  env: Record<string, string>,
  exec: string[],
): Promise<void> {
  const lines = [
    "#!/usr/bin/env bash",
    ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
    `exec ${exec.map(quote).join(" ")} "$@"`,
    "",
  ];
  await writeExecutable(path, lines.join("\n"));
}

async function readLines(path: string): Promise<string[]> {
  try {
    return (await Deno.readTextFile(path)).split("\n").filter((l) => l);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/**
 * Makes a fake `amp` in `dir/fake_amp/` that plays `replies` in order, one
 * per model turn across all its invocations (like the model server's
 * script), then answers "Done.".
 */
export async function makeFakeAmp(
  dir: string,
  replies: ScriptedReply[],
): Promise<FakeCli> {
  const home = join(dir, "fake_amp");
  await Deno.mkdir(home, { recursive: true });
  await Deno.writeTextFile(
    join(home, "script.json"),
    JSON.stringify({ replies }),
  );
  const bin = join(home, "amp");
  await writeWrapper(bin, {
    FAKE_AMP_DIR: home,
    // Reuses the test's compile cache whatever HOME the runner gives.
    DENO_DIR: Deno.env.get("DENO_DIR") ?? await denoDir(),
  }, [
    Deno.execPath(),
    "run",
    "--quiet",
    "--no-config",
    "--no-lock",
    "--allow-all",
    join(HERE, "fake_amp.ts"),
  ]);
  return {
    bin,
    dir: home,
    async invocations(): Promise<FakeInvocation[]> {
      return (await readLines(join(home, "argv.jsonl"))).map((line) =>
        JSON.parse(line)
      );
    },
  };
}

let cachedDenoDir: string | null = null;

async function denoDir(): Promise<string> {
  if (cachedDenoDir !== null) return cachedDenoDir;
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  cachedDenoDir = JSON.parse(new TextDecoder().decode(output.stdout))
    .denoDir as string;
  return cachedDenoDir;
}

/**
 * Makes one of the bash fakes in `dir/<kind>/`; `env` adds variables
 * (`FAKE_CRASH_ALWAYS: "1"`, `FAKE_LEAVE: "setsid"`).
 */
export async function makeFakeCli(
  dir: string,
  kind: FakeKind,
  env: Record<string, string> = {},
): Promise<FakeCli> {
  const home = join(dir, kind);
  await Deno.mkdir(home, { recursive: true });
  const bin = join(home, "agent");
  await writeWrapper(bin, { FAKE_CLI_DIR: home, ...env }, [
    "bash",
    join(HERE, `${kind}.sh`),
  ]);
  return {
    bin,
    dir: home,
    async invocations(): Promise<FakeInvocation[]> {
      return (await readLines(join(home, "argv.log"))).map((line) => {
        const [pid, ...argv] = line.split("\t");
        return { pid: Number(pid), argv, cwd: "" };
      });
    },
  };
}

/** The pids of the children a fake said it started (`never_ends`). */
export async function fakeChildren(fake: FakeCli): Promise<number[]> {
  return (await readLines(join(fake.dir, "children.log"))).map(Number);
}

/**
 * The pid of the process `leaves_behind` left (once it has written it), or
 * `null` before.
 */
export async function leftPid(fake: FakeCli): Promise<number | null> {
  const [line] = await readLines(join(fake.dir, "left.pid"));
  return line === undefined ? null : Number(line);
}

/** The lines `leaves_behind`'s processes appended (`start PID`, `agent PID`, `setsid PID`). */
export async function fakeLines(fake: FakeCli): Promise<string[]> {
  return await readLines(join(fake.dir, "lines.log"));
}
