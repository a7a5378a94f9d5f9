/**
 * `prompt_runner control steer`: tell a live run's agent something.
 *
 * @module
 */

import { steer } from "../../lib/control/mod.ts";
import { UsageError } from "../../lib/shared/mod.ts";
import { parseCommandArgs, stringFlag } from "../_args.ts";
import type { Command, CommandContext } from "../_context.ts";
import { isPacketDir, resolveRun } from "./_target.ts";
import { resolve } from "node:path";

const HELP = `Usage: prompt_runner control steer [TARGET] TEXT... [options]

Steers a live run's agent: the words are joined into one message delivered
on the provider's lane (written to the live session, or the turn is
interrupted and the same thread resumed with the message and an instruction
to carry on). A steer changes how the agent works, never the contract, and
each prompt has a budget (recovery.max_steers, default 3) per run. When the
first word is a packet directory it is the TARGET; otherwise every word is
text and the TARGET is the current directory.

Options:
  --prompt ID         Only for this prompt: refused if another one is running
  --author NAME       Who asks (default: $USER)
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  -h, --help          Show this help

Exit codes:
  0 the steer is queued (see 'prompt_runner control log' for delivery)
  2 usage error or empty steer   3 packet or run not found
  4 the run is not running
`;

async function steerCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("control steer", argv, {
    prompt: { type: "string" },
    author: { type: "string" },
    "state-root": { type: "string" },
  });
  if (args.values.help) {
    await context.stdout.write(HELP);
    return 0;
  }
  let words = args.positionals;
  let target: string | undefined;
  const stateRoot = stringFlag(args, "state-root");
  if (
    stateRoot === undefined && words.length >= 2 &&
    await isPacketDir(resolve(context.cwd, words[0]!))
  ) {
    [target, ...words] = words;
  }
  const text = words.join(" ").trim();
  if (text === "") {
    throw new UsageError("A steer needs something to say: the text is empty", {
      hint: "Run 'prompt_runner control steer [TARGET] TEXT...'",
    });
  }
  const ref = await resolveRun(target, context.cwd, stateRoot);
  const author = stringFlag(args, "author");
  const promptId = stringFlag(args, "prompt");
  const receipt = await steer(ref, text, {
    ...(author === undefined ? {} : { author }),
    ...(promptId === undefined ? {} : { promptId }),
  });
  await context.stdout.line(
    `Queued steer for run ${ref.run_id} (request ${receipt.request_id}); it is delivered at the next event boundary`,
  );
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
