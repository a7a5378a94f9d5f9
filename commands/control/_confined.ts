/**
 * Running a control command confined to its run (DESIGN §11): the main
 * thread resolves the state root and packet, then the command does its work
 * in a worker whose permissions reach only those (plus what liveness checks
 * need). A path that escapes by name is stopped by the runtime
 * (`NotCapable`, reported as exit 4); links are refused by the file code.
 * Needs `--unstable-worker-options`.
 *
 * @module
 */

import {
  errorText,
  ExitCode,
  PromptRunnerError,
  StateError,
} from "../../lib/shared/errors.ts";
import type { CommandContext } from "../_context.ts";
import { StdoutClosedError, Writer } from "../_output.ts";
import type { RunLocation } from "../../lib/workspace/run_location.ts";
import type { ControlDeclaration, ControlInput } from "./_declare.ts";
import type { FleetChoice } from "../_fleet_flags.ts";
import { CONTROL_ENV, fleetScope, planControl, runScope } from "./_scope.ts";
import { fleetCallModule, workerModule } from "./_worker_module.ts";

/** A message from the main thread to the worker. */
export type ToWorker =
  | {
    type: "run";
    /** The parsed values and the location: the worker parses nothing. */
    input: ControlInput<unknown>;
    cwd: string;
    color: boolean;
    /** The test hook's path to escape to (`setTestEscape`), or `null`. */
    escape: string | null;
    /**
     * The worker writes to the process's stdout and stderr itself (with
     * stderr terminal-safe) instead of forwarding each write: true when the
     * context's writers are those streams.
     */
    direct: boolean;
  }
  | { type: "ack"; id: number; closed: boolean }
  | {
    /** One call of the worker's handler (a dashboard action). */
    type: "call";
    request: unknown;
    /** The run's state root (`null` for a fleet run). */
    stateRoot: string | null;
    /** As for `run`. */
    escape: string | null;
  };

/** A message from the worker to the main thread. */
export type FromWorker =
  | { type: "write"; id: number; stream: "stdout" | "stderr"; text: string }
  | { type: "done"; code: number }
  | { type: "result"; value: unknown }
  | {
    type: "failed";
    /** A refusal with its own exit code (not a bug). */
    refused: boolean;
    name: string;
    message: string;
    code: string | null;
    hint: string | null;
    exitCode: number;
    stack: string | null;
  };

let testEscape: string | null = null;

/**
 * A test's hook: every confined worker this process starts first writes
 * `path` (relative to its state root), which the runtime must refuse when
 * it leaves the scope by name. Installed only by the tests' entry
 * (`tests/_helpers/fault_main.ts`); no environment variable reaches it.
 */
export function setTestEscape(path: string | null): void {
  testEscape = path;
}

/** An error the worker reported, with the exit code it asked for. */
class WorkerReportedError extends PromptRunnerError {
  constructor(failed: FromWorker & { type: "failed" }) {
    super(failed.message, {
      code: failed.code ?? "REFUSED",
      exitCode: failed.exitCode,
      ...(failed.hint === null ? {} : { hint: failed.hint }),
    });
    this.name = failed.name;
    if (failed.stack !== null) this.stack = failed.stack;
  }
}

function rebuilt(failed: FromWorker & { type: "failed" }): Error {
  if (failed.refused) return new WorkerReportedError(failed);
  // Not ours: keep the name and errno code, so a full disk is still the
  // environment's failure and anything else still a bug.
  const error = new Error(failed.message);
  error.name = failed.name;
  if (failed.code !== null) Object.assign(error, { code: failed.code });
  if (failed.stack !== null) error.stack = failed.stack;
  return error;
}

/**
 * Whether this process may narrow a worker's permissions. Without
 * `--unstable-worker-options` the runtime would end the process (exit 70)
 * at `new Worker`, so the flag is looked for first: in the runtime's own
 * arguments (those before the script's), or baked into a compiled binary.
 */
function workerOptionsEnabled(): boolean {
  // A process's arguments never change: a dashboard asks once.
  enabledHere ??= lookForWorkerOptions();
  return enabledHere;
}

let enabledHere: boolean | undefined;

function lookForWorkerOptions(): boolean {
  try {
    if (!/(^|\/)deno$/.test(Deno.execPath())) return true;
    if (Deno.build.os !== "linux") return true;
    // Deno lets only --allow-all read /proc/self: cat reads it instead. A
    // blocking read costs ~1 ms; an async one, with its streams, ~10.
    const result = new Deno.Command("cat", {
      args: [`/proc/${Deno.pid}/cmdline`],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).outputSync();
    if (!result.success) return true;
    const cmdline = new TextDecoder().decode(result.stdout).split("\0");
    if (cmdline.at(-1) === "") cmdline.pop();
    return cmdline.slice(0, cmdline.length - Deno.args.length).includes(
      "--unstable-worker-options",
    );
  } catch {
    // Cannot tell: try.
    return true;
  }
}

/**
 * The entries this process holds: a worker asking for more than its parent
 * is refused, and a command that lacks one (an unset `$USER` unreadable,
 * say) copes as it does outside a worker.
 */
function granted<T extends string>(
  entries: readonly T[],
  descriptor: (entry: T) => Deno.PermissionDescriptor,
): T[] | false {
  const held = entries.filter((entry) =>
    Deno.permissions.querySync(descriptor(entry)).state === "granted"
  );
  return held.length > 0 ? held : false;
}

function cannotConfine(what: string, detail: string, cause?: unknown): never {
  throw new StateError(
    `Cannot confine ${what} to its state root: ${detail}`,
    {
      code: "CANNOT_CONFINE",
      hint:
        "Run prompt_runner with --unstable-worker-options and the permissions its README names (deno task prompt_runner does)",
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/** Whether the context writes to this process's own stdout and stderr. */
function writesDirectly(context: CommandContext): boolean {
  return context.stdout instanceof Writer && context.stderr instanceof Writer &&
    context.stdout.wraps(Deno.stdout) && !context.stdout.terminalSafe &&
    context.stderr.wraps(Deno.stderr) && context.stderr.terminalSafe;
}

/**
 * Starts worker `entry` with permissions narrowed to `scope` (what
 * {@linkcode runScope} names), after checking this process may narrow them.
 *
 * @param what What runs, for the error (`"control status"`).
 * @throws {StateError} `CANNOT_CONFINE` when the worker cannot be confined.
 */
function confinedWorker(
  what: string,
  entry: URL | string,
  scope: { read: string[]; write: string[]; net?: string[] },
  enabled: boolean,
): Worker {
  if (!enabled) {
    cannotConfine(
      what,
      "the runtime was started without --unstable-worker-options",
    );
  }
  try {
    return new Worker(typeof entry === "string" ? entry : entry.href, {
      type: "module",
      deno: {
        permissions: {
          read: scope.read,
          write: scope.write.length > 0 ? scope.write : false,
          // Liveness: /proc is read through cat; run.lock is in the root.
          run: granted(["cat"], (command) => ({ name: "run", command })),
          env: granted(CONTROL_ENV, (variable) => ({ name: "env", variable })),
          sys: granted(
            ["hostname", "uid"] as const,
            (kind) => ({ name: "sys", kind }),
          ),
          // A fleet command reaches its fleet's servers, and nothing else.
          net: scope.net !== undefined && scope.net.length > 0
            ? scope.net
            : false,
          ffi: false,
          import: false,
        },
      },
    });
  } catch (error) {
    cannotConfine(
      what,
      errorText(error),
      error,
    );
  }
}

/** Where a confined call acts: a run on files, or a run of a fleet. */
export type CallPlace =
  | Pick<RunLocation, "state_root" | "packet_dir">
  | { fleet: FleetChoice };

/**
 * Runs a control command: plans it on this thread from its declaration
 * (parsing `argv` once, resolving its run), then does its work in a worker
 * confined to that run.
 *
 * @param name The command's name, which its module exports its declaration by.
 * @param declaration The command's declaration.
 * @param module The URL of the module that declares it.
 * @returns The command's exit code.
 * @throws The planner's errors (usage, not found, `CANNOT_PLAN`), or the
 * command's, rebuilt in this thread.
 */
export async function runConfined(
  name: string,
  declaration: ControlDeclaration,
  module: string,
  context: CommandContext,
  argv: string[],
  help: () => string,
): Promise<number> {
  // Looking for the flag spawns cat: done before the plan reads anything.
  const enabled = workerOptionsEnabled();
  const plan = await planControl(name, declaration, argv, context);
  if (plan === "help") {
    await context.stdout.write(help());
    return ExitCode.OK;
  }
  const worker = confinedWorker(
    `"control ${name}"`,
    workerModule(module, name, plan.input.fleet !== null),
    plan,
    enabled,
  );
  try {
    return await new Promise<number>((resolve, reject) => {
      worker.onmessage = async (event: MessageEvent<FromWorker>) => {
        const message = event.data;
        if (message.type === "done") resolve(message.code);
        else if (message.type === "failed") reject(rebuilt(message));
        else if (message.type === "write") {
          let closed = false;
          try {
            await context[message.stream].write(message.text);
          } catch (error) {
            if (!(error instanceof StdoutClosedError)) {
              reject(error);
              return;
            }
            closed = true;
          }
          worker.postMessage(
            { type: "ack", id: message.id, closed } satisfies ToWorker,
          );
        }
      };
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
      worker.postMessage(
        {
          type: "run",
          input: plan.input,
          cwd: context.cwd,
          color: context.color,
          escape: testEscape,
          direct: writesDirectly(context),
        } satisfies ToWorker,
      );
    });
  } catch (error) {
    if (error instanceof StdoutClosedError) return ExitCode.OK;
    throw error;
  } finally {
    worker.terminate();
  }
}

/**
 * Calls the handler of worker `entry` (see `serveCall` in `_worker.ts`)
 * once, with `request`, in a worker confined to the run at `place`
 * exactly as a control command on it is ({@linkcode runScope}; for a fleet
 * run {@linkcode fleetScope}: its servers only, no file but its creds):
 * the dashboard's actions run this way, so they have no power the CLI
 * lacks.
 *
 * @param what What runs, for the errors (`web action "amend"`).
 * @param persist Whether the call may rewrite the packet's prompt files
 * (a fleet run's are its machine's business: nothing here).
 * @returns What the handler returned.
 * @throws The handler's error, rebuilt in this thread: a refusal (a path
 * outside the scope, a link) as a {@linkcode PromptRunnerError} with its
 * exit code; {@linkcode StateError} `CANNOT_CONFINE` when the worker cannot
 * be confined.
 */
export async function callConfined(
  what: string,
  entry: URL,
  place: CallPlace,
  persist: boolean,
  request: unknown,
): Promise<unknown> {
  const enabled = workerOptionsEnabled();
  const fleet = "fleet" in place;
  const scope = "fleet" in place
    ? await fleetScope(place.fleet)
    : await runScope(place, persist);
  const worker = confinedWorker(
    what,
    fleet ? fleetCallModule(entry) : entry,
    scope,
    enabled,
  );
  try {
    return await new Promise<unknown>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FromWorker>) => {
        const message = event.data;
        if (message.type === "result") resolve(message.value);
        else if (message.type === "failed") reject(rebuilt(message));
        else reject(new Error(`Unexpected "${message.type}" from ${what}`));
      };
      worker.onerror = (event) => {
        event.preventDefault();
        reject(new Error(event.message));
      };
      worker.postMessage(
        {
          type: "call",
          request,
          stateRoot: "fleet" in place ? null : place.state_root,
          escape: testEscape,
        } satisfies ToWorker,
      );
    });
  } finally {
    worker.terminate();
  }
}
