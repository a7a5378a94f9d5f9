/**
 * `prompt_runner control events`: replay and follow a run's events.
 *
 * @module
 */

import type { EventsFrom } from "../../lib/control/subscribe.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import { DEFAULT_VIEW } from "../../lib/shared/view.ts";
import { viewFlags } from "../_args.ts";
import type { CommandContext } from "../_context.ts";
import type { ViewSettings } from "../../lib/shared/view.ts";
import {
  type ControlInput,
  declareControl,
  type FlagValues,
} from "./_declare.ts";
import { withStopSignals } from "./_signals.ts";

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

/** The replay's start and view, checked before any file is read. */
function prepare(
  { values }: { values: FlagValues },
): { from: EventsFrom; view: Partial<ViewSettings> } {
  return {
    from: parseFrom(values.from as string | undefined),
    view: viewFlags(values),
  };
}

async function replay(
  context: CommandContext,
  input: ControlInput<ReturnType<typeof prepare>>,
): Promise<number> {
  const { values, prepared } = input;
  const { from, view } = prepared;
  // The work's modules: loaded by the worker, never by the planner.
  const { runAt } = await import("./_run_at.ts");
  const { eventByteBatches, eventLineBatches } = await import(
    "../../lib/control/events.ts"
  );
  const { createRenderer } = await import(
    "../../lib/render/create_renderer.ts"
  );
  const { renderEventBatches } = await import("../../lib/render/sinks.ts");
  await using run = await runAt(input);
  const ref = run.ref;
  const json = values.json === true;
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

/** `control events`. */
export const events = declareControl({
  about: `Usage: prompt_runner control events [TARGET] [options]

Prints a run's events, then follows them until the run finishes. Each event
is printed once, in order. TARGET is a workspace id, a packet directory or
a state root (default: the current directory, else the workspace related
to it). An interrupted run continued with 'run --resume' goes on after its
first run_finished: a replay that finds the resumed run's events follows
them to its last run_finished.`,
  flags: {
    from: {
      type: "string",
      arg: "WHERE",
      help: "start (replay everything, the default), current (only\n" +
        "events from now on), or a seq number to start at",
    },
    "log-mode": {
      type: "string",
      arg: "M",
      help: "Render as compact (default), verbose or studio",
    },
    "tool-output": {
      type: "string",
      arg: "M",
      help: "none | summary | preview | full",
    },
    thinking: { type: "string", arg: "M", help: "show | hide" },
    diff: {
      type: "string",
      arg: "M",
      help: "none | stat | full (path-only changes show no body here)",
    },
    json: {
      type: "boolean",
      help: "Print the stored event lines unchanged (NDJSON)",
    },
  },
  footer: `Exit codes:
  0 the run finished (run_finished was printed), or stdout closed
  2 usage error   3 packet or run not found
  5 the run ended without run_finished: its runner is gone, or another run
    took over the state root
  130/143 stopped by SIGINT/SIGTERM

Examples:
  prompt_runner control events examples/demo --from current --json | jq -c .`,
  target: "location",
  writes: "nothing",
  prepare,
  run: replay,
});
