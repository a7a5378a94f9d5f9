/**
 * `prompt_runner control view`: change how a live run renders.
 *
 * @module
 */

import { UsageError } from "../../lib/shared/errors.ts";
import type { ViewSettings } from "../../lib/shared/view.ts";
import { viewFlags } from "../_args.ts";
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
  type ControlInput,
  declareControl,
  type FlagValues,
} from "./_declare.ts";

/** The settings to change: at least one, each checked here first. */
function settingsOf(
  { values }: { values: FlagValues },
): Partial<ViewSettings> {
  const settings = viewFlags(values);
  if (Object.keys(settings).length === 0) {
    throw new UsageError("Name at least one setting to change", {
      hint:
        "Use --log-mode, --tool-output, --thinking or --diff; see 'prompt_runner control view --help'",
    });
  }
  waitChoice(values);
  return settings;
}

async function requestView(
  context: CommandContext,
  input: ControlInput<Partial<ViewSettings>>,
): Promise<number> {
  const { values, prepared: settings } = input;
  const wait = waitChoice(values);
  const json = values.json === true;
  const { runAt } = await import("./_run_at.ts");
  const { setView } = await import("../../lib/control/set_view.ts");
  await using run = await runAt(input);
  const ref = run.ref;
  const author = values.author as string | undefined;
  const receipt = await sendRequest(
    wait,
    () => setView(ref, settings, author === undefined ? {} : { author }),
  );
  const named = Object.entries(settings).sort().map(([k, v]) => `${k}=${v}`)
    .join(", ");
  return await reportSent(context, ref, receipt, {
    wait,
    json,
    words: {
      what: `Requested ${named}`,
      later: "it applies at the next event boundary",
      waiting: "waiting for its outcome",
      hint: "'prompt_runner control log' shows whether it was applied",
    },
  });
}

const SETTINGS = "Settings (at least one)";

/** `control view`. */
export const view = declareControl({
  about: `Usage: prompt_runner control view [TARGET] [settings] [options]

Changes how a live run renders, from its next event boundary on. The values
are checked here first; nothing is written for a bad one. TARGET is a
workspace id, a packet directory or a state root (default: the current
directory, else the workspace related to it).`,
  flags: {
    "log-mode": {
      type: "string",
      arg: "M",
      help: "compact | verbose | studio",
      section: SETTINGS,
    },
    "tool-output": {
      type: "string",
      arg: "M",
      help: "none | summary | preview | full",
      section: SETTINGS,
    },
    thinking: {
      type: "string",
      arg: "M",
      help: "show | hide",
      section: SETTINGS,
    },
    diff: {
      type: "string",
      arg: "M",
      help: "none | stat | full",
      section: SETTINGS,
    },
    author: authorFlag("asks"),
    ...WAIT_FLAGS,
    json: REQUEST_JSON_FLAG,
  },
  footer: `Exit codes:
  0 the request is queued (see 'prompt_runner control log' for its outcome);
    with --wait, it was applied
  2 usage error or bad value (a bad --timeout too)   3 packet or run not found
  4 the run is not running; with --wait, the run rejected the request (the
    reason on stderr)
  5 with --wait: the run ended, or its runner died, before the request was
    applied   124 with --wait --timeout: the time passed first

Examples:
  prompt_runner control view examples/demo --thinking hide --wait --timeout 30`,
  target: "location",
  writes: "requests",
  prepare: settingsOf,
  run: requestView,
});
