/**
 * `prompt_runner control view`: change how a live run renders.
 *
 * @module
 */

import { setView } from "../../lib/control/mod.ts";
import { terminalSafe } from "../../lib/render/mod.ts";
import { UsageError, type ViewSettings } from "../../lib/shared/mod.ts";
import { stringFlag } from "../_args.ts";
import type { Command, CommandContext } from "../_context.ts";
import { viewFlags } from "../run.ts";
import { parseRunCommand } from "./_target.ts";

const HELP = `Usage: prompt_runner control view [TARGET] [settings] [options]

Changes how a live run renders, from its next event boundary on. The values
are checked here first; nothing is written for a bad one. TARGET is a packet
directory or a state root (default: the current directory).

Settings (at least one):
  --log-mode M        compact | verbose | studio
  --tool-output M     none | summary | preview | full
  --thinking M        show | hide
  --diff M            none | stat | full

Options:
  --author NAME       Who asks (default: $USER, else $LOGNAME, else the
                      account name of this process, else uid:N)
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  -h, --help          Show this help

Exit codes:
  0 the request is queued (see 'prompt_runner control log' for its outcome)
  2 usage error or bad value   3 packet or run not found
  4 the run is not running
`;

async function view(context: CommandContext, argv: string[]): Promise<number> {
  let settings: Partial<ViewSettings> = {};
  const parsed = await parseRunCommand(context, "view", HELP, argv, {
    "log-mode": { type: "string" },
    "tool-output": { type: "string" },
    thinking: { type: "string" },
    diff: { type: "string" },
    author: { type: "string" },
  }, (args) => {
    settings = viewFlags(args.values);
    if (Object.keys(settings).length === 0) {
      throw new UsageError("Name at least one setting to change", {
        hint:
          "Use --log-mode, --tool-output, --thinking or --diff; see 'prompt_runner control view --help'",
      });
    }
  });
  if (parsed === null) return 0;
  const { args, ref } = parsed;
  const author = stringFlag(args, "author");
  const receipt = await setView(
    ref,
    settings,
    author === undefined ? {} : { author },
  );
  const named = Object.entries(settings).sort().map(([k, v]) => `${k}=${v}`)
    .join(", ");
  await context.stdout.line(terminalSafe(
    `Requested ${named} for run ${ref.run_id} (request ${receipt.request_id}); it applies at the next event boundary`,
  ));
  await context.stderr.line(
    "hint: 'prompt_runner control log' shows whether it was applied",
  );
  return 0;
}

/** The `control view` command. */
export const controlViewCommand: Command = {
  name: "view",
  summary: "Change a live run's view (log mode, tool output, thinking, diff)",
  help: HELP,
  run: view,
};
