/**
 * The worker a confined control command (or a dashboard action) runs in
 * (DESIGN §11): its permissions reach only the run's state root and packet,
 * so a path that escapes by name is stopped by the runtime. A command's
 * output goes to the process's own stdout and stderr, or, when the caller
 * gave other writers, back to the main thread one acknowledged write at a
 * time; the exit code or the error ends the conversation. An action is one
 * call: its result or its error.
 *
 * @module
 */

/// <reference lib="deno.worker" />

import { StdoutClosedError, Writer } from "../_output.ts";
import type { CommandContext } from "../_context.ts";
import { PromptRunnerError } from "../../lib/shared/errors.ts";
import type { FromWorker, ToWorker } from "./_confined.ts";
import type { ControlDeclaration } from "./_declare.ts";

const acks = new Map<number, (closed: boolean) => void>();
let nextWrite = 0;

function post(message: FromWorker): void {
  self.postMessage(message);
}

/** A writer whose text is written by the main thread. */
class ForwardingWriter extends Writer {
  readonly #stream: "stdout" | "stderr";
  #gone = false;

  constructor(stream: "stdout" | "stderr") {
    super({ write: (bytes) => Promise.resolve(bytes.length) });
    this.#stream = stream;
  }

  override get closed(): boolean {
    return this.#gone;
  }

  override async writeBytes(bytes: Uint8Array): Promise<void> {
    await this.write(new TextDecoder().decode(bytes));
  }

  override async write(text: string): Promise<void> {
    if (this.#gone) throw new StdoutClosedError();
    const id = nextWrite++;
    const closed = await new Promise<boolean>((resolve) => {
      acks.set(id, resolve);
      post({ type: "write", id, stream: this.#stream, text });
    });
    if (closed) {
      this.#gone = true;
      throw new StdoutClosedError();
    }
  }
}

/** The error as the main thread rebuilds it. */
function describe(error: unknown): FromWorker {
  if (error instanceof Deno.errors.NotCapable) {
    return {
      type: "failed",
      refused: true,
      name: "StateError",
      message:
        `Refused to reach a path outside the run's state root and packet: ${error.message}`,
      code: "OUTSIDE_STATE_ROOT",
      hint:
        "A control command reads and writes only inside the state root (and reads the packet); check TARGET, --state-root and the paths in the state root",
      exitCode: 4,
      stack: error.stack ?? null,
    };
  }
  if (error instanceof PromptRunnerError) {
    return {
      type: "failed",
      refused: true,
      name: error.name,
      message: error.message,
      code: error.code,
      hint: error.hint ?? null,
      exitCode: error.exitCode,
      stack: error.stack ?? null,
    };
  }
  const err = error instanceof Error ? error : new Error(String(error));
  const code = (err as { code?: unknown }).code;
  return {
    type: "failed",
    refused: false,
    name: err.name,
    message: err.message,
    code: typeof code === "string" ? code : null,
    hint: null,
    exitCode: 70,
    stack: err.stack ?? null,
  };
}

/**
 * A test's way to make the worker reach outside its scope by name: the
 * path (relative to the state root) the main thread's test hook names
 * (`setTestEscape` in `_confined.ts`); the runtime must stop it.
 */
async function testEscape(
  escape: string | null,
  stateRoot: string | null,
): Promise<void> {
  if (escape === null || stateRoot === null) return;
  await Deno.writeTextFile(`${stateRoot}/${escape}`, "escaped\n");
}

async function run(
  declaration: ControlDeclaration,
  message: ToWorker & { type: "run" },
): Promise<void> {
  // Writing to the process's streams from here saves a copy and a round
  // trip per write (a replay writes hundreds of megabytes).
  const context: CommandContext = {
    stdout: message.direct
      ? new Writer(Deno.stdout)
      : new ForwardingWriter("stdout"),
    stderr: message.direct
      ? new Writer(Deno.stderr, { terminalSafe: true })
      : new ForwardingWriter("stderr"),
    color: message.color,
    cwd: message.cwd,
  };
  try {
    await testEscape(message.escape, message.input.location.state_root);
    const code = await declaration.run(context, message.input);
    post({ type: "done", code });
  } catch (error) {
    post(
      error instanceof StdoutClosedError
        ? { type: "done", code: 0 }
        : describe(error),
    );
  }
}

/**
 * Serves the main thread's one call (`callConfined` in `_confined.ts`):
 * `handler` runs with the request in this worker, confined to the run, and
 * its result (structured-cloneable) or its error is posted back, the error
 * described as a command's would be (a path outside the scope is the
 * runtime's refusal, exit 4).
 */
export function serveCall(
  handler: (request: unknown) => Promise<unknown>,
): void {
  self.onmessage = async (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type !== "call") return;
    try {
      await testEscape(message.escape, message.stateRoot);
      post({ type: "result", value: await handler(message.request) });
    } catch (error) {
      post(describe(error));
    }
  };
}

/**
 * The one worker entry of every control command: serves the main thread's
 * request to run `declaration`'s work with the values and the location the
 * main thread planned (`runConfined` in `_confined.ts` starts the worker
 * on a two-line module that imports this and the command's module, so a
 * worker loads only the code of the command it runs).
 */
export function serveControl(declaration: ControlDeclaration): void {
  self.onmessage = (event: MessageEvent<ToWorker>) => {
    const message = event.data;
    if (message.type === "ack") {
      const resolve = acks.get(message.id);
      acks.delete(message.id);
      resolve?.(message.closed);
    } else if (message.type === "run") {
      run(declaration, message);
    }
  };
}
