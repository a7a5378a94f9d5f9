/**
 * `prompt_runner control contract`: a prompt's contract, its amendments, and
 * what runs enforce.
 *
 * @module
 */

import { contract } from "../../lib/contract/mod.ts";
import { paint, terminalSafe, terminalSafeData } from "../../lib/render/mod.ts";
import { parseCommandArgs, stringFlag } from "../_args.ts";
import { CONTROL_CONTRACT_INFO } from "./_help.ts";
import type { Command, CommandContext } from "../_context.ts";
import { resolveAmendTarget } from "./_amend_target.ts";
import { WORKSPACE_FLAGS, workspaceFlags } from "./_target.ts";

const PHASE_STYLE = {
  pre_verify: "green",
  post_failure: "red",
  post_success: "yellow",
} as const;

async function contractCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("control contract", argv, {
    "state-root": { type: "string" },
    ...WORKSPACE_FLAGS,
    json: { type: "boolean" },
  });
  if (args.values.help) {
    await context.stdout.write(CONTROL_CONTRACT_INFO.help);
    return 0;
  }
  const { target, promptId } = await resolveAmendTarget(
    "contract",
    args.positionals,
    context.cwd,
    stringFlag(args, "state-root"),
    workspaceFlags(args),
  );
  const stored = await contract(target, promptId);
  if (args.values.json) {
    await context.stdout.json(stored);
    return 0;
  }
  const view = terminalSafeData(stored);
  const lines = [
    "",
    `  ${paint(`contract for ${view.prompt_id}`, "bold")}`,
    "",
  ];
  if (view.amendments.length === 0) {
    lines.push(
      paint("  no amendments: the packet's contract is in force", "dim"),
    );
  } else {
    for (const a of view.amendments) {
      lines.push(
        `  ${
          paint(a.phase.padEnd(12), PHASE_STYLE[a.phase])
        }  ${a.operation} ${a.clause}${
          a.entries.length ? ` ${JSON.stringify(a.entries)}` : ""
        }  ${
          paint(
            `by ${a.author} — ${a.reason}${
              a.persisted ? " (persisted into the packet)" : ""
            }`,
            "dim",
          )
        }`,
      );
    }
  }
  lines.push("");
  if (view.diff.length === 0) lines.push(paint("  (empty contract)", "dim"));
  for (const line of view.diff) {
    const text = `${line.clause}: ${line.entry}`;
    lines.push(
      line.change === "same"
        ? paint(`    ${text}`, "dim")
        : line.change === "removed"
        ? paint(`  - ${text}`, "red")
        : paint(`  + ${text}`, "green"),
    );
  }
  lines.push("");
  const out = lines.join("\n") + "\n";
  await context.stdout.write(terminalSafe(out, { style: context.color }));
  return 0;
}

/** The `control contract` command. */
export const controlContractCommand: Command = {
  ...CONTROL_CONTRACT_INFO,
  run: contractCommand,
};
