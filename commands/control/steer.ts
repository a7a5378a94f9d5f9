/**
 * `prompt_runner control steer`: tell a live run's agent something.
 *
 * @module
 */

import {
  checkSteerText,
  MAX_STEER_BYTES,
  steer as sendSteerRequest,
} from "../../lib/control/steer.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import type { CommandContext } from "../_context.ts";
import { reportSent } from "./_sent.ts";
import {
  REQUEST_JSON_FLAG,
  sendRequest,
  WAIT_FLAGS,
  waitChoice,
} from "./_wait.ts";
import {
  authorFlag,
  type ControlArgs,
  type ControlInput,
  declareControl,
} from "./_declare.ts";

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

/**
 * The steer's text, from the words or standard input, checked before the
 * run is looked for: a usage error is one whatever state the run is in.
 */
async function steerText({ words, stdin }: ControlArgs): Promise<string> {
  const fromStdin = words.length === 1 && words[0] === "-";
  const raw = fromStdin
    ? await readSteer(stdin ?? Deno.stdin.readable)
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
  return checkSteerText(raw);
}

/** The steer's text, with `--wait` and `--timeout` checked first. */
async function prepareSteer(args: ControlArgs): Promise<string> {
  waitChoice(args.values);
  return await steerText(args);
}

async function sendSteer(
  context: CommandContext,
  input: ControlInput<string>,
): Promise<number> {
  const { values, prepared: text } = input;
  const wait = waitChoice(values);
  const json = values.json === true;
  const { runAt } = await import("./_run_at.ts");
  await using run = await runAt(input);
  const ref = run.ref;
  const author = values.author as string | undefined;
  const promptId = values.prompt as string | undefined;
  const receipt = await sendRequest(wait, () =>
    sendSteerRequest(ref, text, {
      ...(author === undefined ? {} : { author }),
      ...(promptId === undefined ? {} : { promptId }),
    }));
  return await reportSent(context, ref, receipt, {
    wait,
    json,
    words: {
      what: "Queued steer",
      later: "it is delivered at the next event boundary",
      waiting: "waiting for its lane to deliver or refuse it",
      hint: "'prompt_runner control log' shows whether the lane delivered it",
    },
  });
}

/** `control steer`. */
export const steer = declareControl({
  about: `Usage: prompt_runner control steer [TARGET] TEXT... [options]
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
the TARGET is the current directory, else the workspace related to it.`,
  flags: {
    prompt: {
      type: "string",
      arg: "ID",
      help: "Only for this prompt: refused if another one is running",
    },
    author: authorFlag("asks"),
    ...WAIT_FLAGS,
    json: REQUEST_JSON_FLAG,
  },
  footer: `With --wait, a steer is final when its lane delivers it (applied) or
refuses it (rejected, as when its prompt finishes first), not when the run
accepts it. One still undelivered when the run ends is refused as the run
closes: that is exit 5, the run ended first.

Exit codes:
  0 the steer is queued (see 'prompt_runner control log' for delivery);
    with --wait, it was delivered
  2 usage error, empty steer (an empty stdin too), or a steer over the limit,
    or a bad --timeout
  3 packet or run not found   4 the run is not running; with --wait, the
    steer was rejected (the reason on stderr)
  5 with --wait: the run ended, or its runner died, before the steer was
    delivered   124 with --wait --timeout: the time passed first

Examples:
  prompt_runner control steer examples/demo "Keep the notes under ten lines"
  git diff --stat | prompt_runner control steer examples/demo -
  prompt_runner control steer examples/demo "Stop there" --wait --timeout 60`,
  target: "steer",
  writes: "requests",
  prepare: prepareSteer,
  run: sendSteer,
});
