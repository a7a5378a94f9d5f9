/**
 * Delivering a notification to a command: the program runs (argv, never a
 * shell) in a process group of its own, gets the event as JSON on stdin,
 * and is killed, its whole group, when it passes its time limit or the run
 * stops waiting for it. Its stdout is dropped; the start of its stderr
 * explains a failure.
 *
 * @module
 */

import { errorText } from "../shared/errors.ts";
import { readCapped } from "../shared/run_process.ts";
import { type DeliveryResult, oneLine } from "./_delivery.ts";

/** What {@linkcode deliverCommand} runs, and how long it may take. */
export interface CommandDelivery {
  /** The program and its arguments. */
  argv: readonly string[];
  /** Its working directory. */
  cwd: string;
  /** Its whole environment. */
  env: Record<string, string>;
  /** What it reads on stdin. */
  input: string;
  /** Its time limit. */
  timeoutMs: number;
  /** Aborted (with a reason string) when the run stops waiting for it. */
  signal: AbortSignal;
}

const STDERR_BYTES = 2048;

/** Writes the input and closes stdin; a program that does not read is fine. */
async function feed(
  stdin: WritableStream<Uint8Array>,
  input: string,
): Promise<void> {
  const writer = stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode(input));
    await writer.close();
  } catch {
    await writer.abort().catch(() => {});
  }
}

/**
 * Runs a notification command to its end, its time limit, or the abort of
 * `signal`, whichever comes first. Never throws.
 *
 * Requires `--allow-run` permission.
 */
export async function deliverCommand(
  delivery: CommandDelivery,
): Promise<DeliveryResult> {
  const [program, ...args] = delivery.argv;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program!, {
      args,
      cwd: delivery.cwd,
      env: delivery.env,
      clearEnv: true,
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      // setsid(): its own process group, killed whole.
      detached: true,
    }).spawn();
  } catch (error) {
    return {
      ok: false,
      reason: error instanceof Deno.errors.NotFound
        ? `cannot run ${
          JSON.stringify(program)
        }: not found (or its directory is gone)`
        : `cannot run ${JSON.stringify(program)}: ${oneLine(errorText(error))}`,
    };
  }
  let stopped: string | null = null;
  let exited = false;
  const stop = (why: string): void => {
    if (exited || stopped !== null) return;
    stopped = why;
    try {
      Deno.kill(-child.pid, "SIGKILL");
    } catch {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
  };
  const timer = setTimeout(
    () =>
      stop(
        `did not finish within ${delivery.timeoutMs} ms; its process group was killed`,
      ),
    delivery.timeoutMs,
  );
  const onAbort = (): void =>
    stop(`${String(delivery.signal.reason)}; its process group was killed`);
  delivery.signal.addEventListener("abort", onAbort, { once: true });
  if (delivery.signal.aborted) onAbort();
  const status = child.status;
  const fed = feed(child.stdin, delivery.input);
  const stderr = readCapped(child.stderr, STDERR_BYTES, status, 200);
  let result: Deno.CommandStatus;
  try {
    result = await status;
  } finally {
    exited = true;
    clearTimeout(timer);
    delivery.signal.removeEventListener("abort", onAbort);
  }
  await fed;
  const said = oneLine(await stderr);
  if (stopped !== null) return { ok: false, reason: stopped };
  if (result.success) return { ok: true, note: "exited with code 0" };
  const how = result.signal === null
    ? `exited with code ${result.code}`
    : `was killed by ${result.signal}`;
  return { ok: false, reason: said === "" ? how : `${how}: ${said}` };
}
