/**
 * `prompt_runner control events`: replay and follow a run's events.
 *
 * @module
 */

import {
  eventByteBatches,
  eventLineBatches,
  type EventsFrom,
} from "../../lib/control/subscribe.ts";
import { createRenderer } from "../../lib/render/create_renderer.ts";
import { renderEventBatches } from "../../lib/render/sinks.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import { DEFAULT_VIEW } from "../../lib/shared/view.ts";
import { stringFlag, viewFlags } from "../_args.ts";
import type { Command, CommandContext } from "../_context.ts";
import { withStopSignals } from "./_signals.ts";
import { parseRunCommand } from "./_target.ts";

const HELP = `Usage: prompt_runner control events [TARGET] [options]

Prints a run's events, then follows them until the run finishes. Each event
is printed once, in order. TARGET is a workspace id, a packet directory or
a state root (default: the current directory, else the workspace related
to it). An interrupted run continued with 'run --resume' goes on after its
first run_finished: a replay that finds the resumed run's events follows
them to its last run_finished.

Options:
  --from WHERE        start (replay everything, the default), current (only
                      events from now on), or a seq number to start at
  --log-mode M        Render as compact (default), verbose or studio
  --tool-output M     none | summary | preview | full
  --thinking M        show | hide
  --diff M            none | stat | full (path-only changes show no body here)
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print the stored event lines unchanged (NDJSON)
  -h, --help          Show this help

Exit codes:
  0 the run finished (run_finished was printed), or stdout closed
  2 usage error   3 packet or run not found
  5 the run ended without run_finished: its runner is gone, or another run
    took over the state root
  130/143 stopped by SIGINT/SIGTERM

Examples:
  prompt_runner control events examples/demo --from current --json | jq -c .
`;

/** Parses `--from`: `start`, `current`, or a positive seq. */
export function parseFrom(value: string | undefined): EventsFrom {
  if (value === undefined || value === "start") return "start";
  if (value === "current") return "current";
  if (/^[1-9]\d*$/.test(value)) return Number(value);
  throw new UsageError(
    `Invalid --from ${
      JSON.stringify(value)
    }: expected start, current, or a seq number (1 or more)`,
    { hint: "Run 'prompt_runner control events --help'" },
  );
}

async function events(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  let from: EventsFrom = "start";
  let view = {};
  const parsed = await parseRunCommand(context, "events", HELP, argv, {
    from: { type: "string" },
    "log-mode": { type: "string" },
    "tool-output": { type: "string" },
    thinking: { type: "string" },
    diff: { type: "string" },
    json: { type: "boolean" },
  }, (args) => {
    from = parseFrom(stringFlag(args, "from"));
    view = viewFlags(args.values);
  });
  if (parsed === null) return 0;
  const { args, ref } = parsed;
  const json = args.values.json === true;
  const renderer = createRenderer({ ...DEFAULT_VIEW, ...view });
  return await withStopSignals(async (signal) => {
    if (json) {
      // The stored lines, unchanged: one write per block of whole lines.
      for await (const block of eventByteBatches(ref, { from, signal })) {
        await context.stdout.writeBytes(block);
      }
      return 0;
    }
    await renderEventBatches(
      eventLineBatches(ref, { from, signal }),
      renderer,
      (text) => context.stdout.write(text),
      { color: context.color, signal },
    );
    return 0;
  });
}

/** The `control events` command. */
export const controlEventsCommand: Command = {
  name: "events",
  summary: "Replay and follow a run's events until it finishes",
  help: HELP,
  run: events,
};
