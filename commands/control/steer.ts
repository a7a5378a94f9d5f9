/**
 * `prompt_runner control steer`: tell a live run's agent something.
 *
 * @module
 */

import {
  checkSteerText,
  MAX_STEER_BYTES,
  steer,
} from "../../lib/control/steer.ts";
import { terminalSafe } from "../../lib/render/ansi.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import { parseCommandArgs, stringFlag } from "../_args.ts";
import type { Command, CommandContext } from "../_context.ts";
import {
  isTargetWord,
  resolveRun,
  WORKSPACE_FLAGS,
  workspaceFlags,
} from "./_target.ts";

const HELP = `Usage: prompt_runner control steer [TARGET] TEXT... [options]
       prompt_runner control steer [TARGET] - [options]

Steers a live run's agent: the words are joined into one message delivered
on the provider's lane (written to the live session, or the turn is
interrupted and the same thread resumed with the message and an instruction
to carry on). A lone '-' reads the message from standard input instead. A
steer changes how the agent works, never the contract, and each prompt has
a budget (recovery.max_steers, default 3) per run. A steer is at most
${MAX_STEER_BYTES} bytes.

When the first word is a packet directory or a prepared workspace's id
(and more words follow) it is the TARGET; otherwise every word is text and
the TARGET is the current directory, else the workspace related to it.

Options:
  --prompt ID         Only for this prompt: refused if another one is running
  --author NAME       Who asks (default: $USER, else $LOGNAME, else the
                      account name of this process, else uid:N)
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  -h, --help          Show this help

Exit codes:
  0 the steer is queued (see 'prompt_runner control log' for delivery)
  2 usage error, empty steer (an empty stdin too), or a steer over the limit
  3 packet or run not found   4 the run is not running

Examples:
  prompt_runner control steer examples/demo "Keep the notes under ten lines"
  git diff --stat | prompt_runner control steer examples/demo -
`;

/**
 * Reads a steer from a stream, refusing one larger than the limit as soon
 * as it is seen to be: a huge input is never read whole.
 */
async function readSteer(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > MAX_STEER_BYTES) {
        throw new UsageError(
          `The steer on standard input is too large: it passes the limit of ${MAX_STEER_BYTES} bytes`,
          {
            code: "STEER_TOO_LARGE",
            hint: "Say it in fewer words; a steer is guidance, not a document",
          },
        );
      }
      chunks.push(value);
    }
  } finally {
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError("The steer on standard input is not UTF-8 text", {
      code: "STEER_NOT_TEXT",
    });
  }
}

async function steerCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("control steer", argv, {
    prompt: { type: "string" },
    author: { type: "string" },
    "state-root": { type: "string" },
    ...WORKSPACE_FLAGS,
  });
  if (args.values.help) {
    await context.stdout.write(HELP);
    return 0;
  }
  let words = args.positionals;
  let target: string | undefined;
  const stateRoot = stringFlag(args, "state-root");
  const workspace = workspaceFlags(args);
  if (
    stateRoot === undefined && workspace.workspace === undefined &&
    words.length >= 2 && await isTargetWord(words[0]!, context.cwd)
  ) {
    [target, ...words] = words;
  }
  // The text is checked before the run is looked for: a usage error is one
  // whatever state the run is in.
  const fromStdin = words.length === 1 && words[0] === "-";
  const raw = fromStdin
    ? await readSteer(context.stdin ?? Deno.stdin.readable)
    : words.join(" ");
  if (raw.trim() === "") {
    throw new UsageError(
      `A steer needs something to say: ${
        fromStdin ? "standard input was empty" : "the text is empty"
      }`,
      {
        code: "EMPTY_STEER",
        hint:
          "Run 'prompt_runner control steer [TARGET] TEXT...' or 'control steer [TARGET] -' with the text on standard input",
      },
    );
  }
  const text = checkSteerText(raw);
  const ref = await resolveRun(target, context.cwd, stateRoot, workspace);
  const author = stringFlag(args, "author");
  const promptId = stringFlag(args, "prompt");
  const receipt = await steer(ref, text, {
    ...(author === undefined ? {} : { author }),
    ...(promptId === undefined ? {} : { promptId }),
  });
  await context.stdout.line(terminalSafe(
    `Queued steer for run ${ref.run_id} (request ${receipt.request_id}); it is delivered at the next event boundary`,
  ));
  await context.stderr.line(
    "hint: 'prompt_runner control log' shows whether the lane delivered it",
  );
  return 0;
}

/** The `control steer` command. */
export const controlSteerCommand: Command = {
  name: "steer",
  summary: "Steer a live run's agent",
  help: HELP,
  run: steerCommand,
};
