/**
 * `prompt_runner control contract`: a prompt's contract, its amendments, and
 * what runs enforce.
 *
 * @module
 */

import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import type { CommandContext } from "../_context.ts";
import { type ControlInput, declareControl } from "./_declare.ts";

const PHASE_STYLE = {
  pre_verify: "green",
  post_failure: "red",
  post_success: "yellow",
} as const;

async function showContract(
  context: CommandContext,
  input: ControlInput<undefined>,
): Promise<number> {
  const { values, words } = input;
  const { contract } = await import("../../lib/contract/mod.ts");
  const { contractAt } = await import("./_run_at.ts");
  await using at = await contractAt(input);
  const stored = await contract(at.target, words[0]!);
  if (values.json) {
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

/** `control contract`. */
export const contract = declareControl({
  about: `Usage: prompt_runner control contract [TARGET] PROMPT_ID [options]

Shows a prompt's verify contract: its amendments (phase, operation, clause,
author, reason) and the packet's contract against the one every run from
this state root enforces. Kept entries are indented, removed ones start
with "-", added ones with "+". TARGET is a workspace id (with a packet
binding), a packet directory or a state root (default: the current
directory, else the workspace related to it).`,
  flags: {
    json: {
      type: "boolean",
      help: "Print {prompt_id, packet, enforced, amendments, diff}",
    },
  },
  footer: `Exit codes:
  0 ok   2 usage error   3 packet or prompt not found
  4 an amendments file is corrupt (the message names the line)`,
  target: "contract",
  writes: "nothing",
  run: showContract,
});
