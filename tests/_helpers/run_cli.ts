/**
 * Running the CLI as a real process, the way users do.
 *
 * @module
 */

import { join } from "node:path";
import {
  CLI_PERMISSIONS,
  cliArgs as harnessArgs,
  MAIN,
  ROOT,
} from "../../scripts/_harness/cli.ts";

export { CLI_PERMISSIONS, MAIN, ROOT };
/** The CLI with a test fault installed (`fault` below). */
export const FAULT_MAIN: string = join(
  ROOT,
  "tests",
  "_helpers",
  "fault_main.ts",
);

/** What a finished CLI process left. */
export interface CliResult {
  /** The exit code. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Options for {@linkcode runCli}. */
export interface RunCliOptions {
  /** Working directory. */
  cwd?: string;
  /** Extra environment variables (NO_COLOR=1 is always set). */
  env?: Record<string, string>;
  /** Variables removed from the inherited environment (`USER`, …). */
  unsetEnv?: string[];
  /** Deno flags added to the CLI's permissions (`--deny-read=…`). */
  denoFlags?: string[];
  /** Text for standard input (default: none, stdin is /dev/null). */
  input?: string;
  /**
   * A test fault (see `fault_main.ts`): the CLI is started through that
   * entry, which installs it.
   */
  fault?: string;
}

/** The argv that starts the CLI (through the fault entry when `fault` is given). */
export function cliArgs(
  args: string[],
  denoFlags: string[] = [],
  fault?: string,
): string[] {
  return harnessArgs(
    args,
    denoFlags,
    fault === undefined ? MAIN : FAULT_MAIN,
  );
}

/** Runs the CLI to completion (with no stdin unless given) and returns its output. */
export async function runCli(
  args: string[],
  options: RunCliOptions = {},
): Promise<CliResult> {
  const child = spawnCli(args, options, options.input !== undefined);
  if (options.input !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.input));
    await writer.close();
  }
  const output = await child.output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/**
 * The CLI's environment: the test's, with NO_COLOR=1, the extras and the
 * fault, less the unset.
 */
export function cliEnv(options: RunCliOptions): Record<string, string> {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    NO_COLOR: "1",
    ...options.env,
    ...(options.fault === undefined
      ? {}
      : { PROMPT_RUNNER_TEST_FAULT: options.fault }),
  };
  for (const name of options.unsetEnv ?? []) delete env[name];
  return env;
}

/**
 * Starts the CLI in the background, with stdout and stderr piped, and stdin
 * piped when asked (else /dev/null).
 */
export function spawnCli(
  args: string[],
  options: RunCliOptions = {},
  pipeStdin = false,
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: cliArgs(args, options.denoFlags, options.fault),
    cwd: options.cwd ?? ROOT,
    env: cliEnv(options),
    clearEnv: true,
    stdin: pipeStdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** Polls `check` until it returns a value, or fails after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

/** `promise`, or a failure naming `what` once `ms` pass. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Timed out waiting ${ms} ms for ${what}`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a CLI piped into `head -N` left: head's lines, the CLI's status and stderr. */
export interface HeadResult {
  /** The lines `head` printed. */
  lines: string[];
  /** The CLI's own exit status (bash's PIPESTATUS[0]). */
  code: number;
  /** The CLI's stderr. */
  stderr: string;
}

/** Runs `prompt_runner ARGS | head -N` through a real shell pipe. */
export async function pipeToHead(
  args: string[],
  count: number,
): Promise<HeadResult> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_head_" });
  try {
    const command = [Deno.execPath(), ...cliArgs(args)]
      .map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(" ");
    const output = await new Deno.Command("bash", {
      args: [
        "-c",
        `${command} 2>"$1" | head -${count}; echo "status=\${PIPESTATUS[0]}"`,
        "bash",
        join(dir, "stderr.txt"),
      ],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(output.stdout).trimEnd().split("\n");
    const status = lines.pop() ?? "";
    return {
      lines,
      code: Number(status.replace("status=", "")),
      stderr: await Deno.readTextFile(join(dir, "stderr.txt")),
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
