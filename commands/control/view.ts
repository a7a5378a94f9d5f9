/**
 * `prompt_runner control view`: change how a live run renders.
 *
 * @module
 */

import { setView } from "../../lib/control/set_view.ts";
import { terminalSafe } from "../../lib/render/ansi.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import type { ViewSettings } from "../../lib/shared/view.ts";
import { stringFlag, viewFlags } from "../_args.ts";
import { CONTROL_VIEW_INFO } from "./_help.ts";
import type { Command, CommandContext } from "../_context.ts";
import { parseRunCommand } from "./_target.ts";

async function view(context: CommandContext, argv: string[]): Promise<number> {
  let settings: Partial<ViewSettings> = {};
  const parsed = await parseRunCommand(
    context,
    "view",
    CONTROL_VIEW_INFO.help,
    argv,
    {
      "log-mode": { type: "string" },
      "tool-output": { type: "string" },
      thinking: { type: "string" },
      diff: { type: "string" },
      author: { type: "string" },
    },
    (args) => {
      settings = viewFlags(args.values);
      if (Object.keys(settings).length === 0) {
        throw new UsageError("Name at least one setting to change", {
          hint:
            "Use --log-mode, --tool-output, --thinking or --diff; see 'prompt_runner control view --help'",
        });
      }
    },
  );
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
  ...CONTROL_VIEW_INFO,
  run: view,
};
