/**
 * `prompt_runner status fleet:…` (DESIGN §12): the same report and rollup
 * as on files, of a run read from the fleet alone. The fleet code is
 * loaded only here, and only through `fleetModule()`.
 *
 * @module
 */

import { terminalSafe, terminalSafeData } from "../../lib/render/mod.ts";
import type { CommandContext } from "../_context.ts";
import { openTargetFleet } from "../_fleet_flags.ts";
import { renderStatus, shellWord } from "./_report.ts";
import { promptLines } from "./_prompt_lines.ts";

/** A root name that is not a hash of a path: a workspace's id. */
const HASHED_ROOT = /^r-[0-9a-f]{12}$/;

/** What the command was given. */
export interface FleetStatusArgs {
  /** The fleet TARGET. */
  target: string;
  /** The parsed flags. */
  values: Record<string, unknown>;
}

/**
 * Prints where the fleet run a TARGET names stands.
 *
 * @throws {UsageError} without a fleet, with `--state-root` or
 * `--workspace`, or for a TARGET several runs match (exit 2).
 * @throws {NotFoundError} when no run matches (exit 3).
 * @throws {StateError} when the fleet cannot be reached (exit 4).
 */
export async function fleetStatusReport(
  context: CommandContext,
  args: FleetStatusArgs,
): Promise<number> {
  const { target, values } = args;
  await using client = await openTargetFleet(values, context.cwd, target);
  const run = await client.resolve(target);
  const { rollup, prompts, silent_ms } = await client.status(run);
  if (values.json) {
    await context.stdout.json(rollup);
    return 0;
  }
  const snapshot = run.snapshot;
  // A workspace run resumes by its id; a packet's by its directory there.
  const resumeTarget = HASHED_ROOT.test(run.root)
    ? snapshot.packet_dir || snapshot.packet
    : run.root;
  const report = renderStatus(terminalSafeData(rollup), {
    packet: terminalSafe(snapshot.packet) || null,
    packetSelection: rollup.run.id !== null && snapshot.prompt_ids === null,
    resumeTarget: terminalSafe(shellWord(resumeTarget)),
    fleet: { silent_ms, machine: terminalSafe(snapshot.host) },
  });
  const rows = prompts.map((prompt) => ({ ...prompt, this_run: true }));
  let text = report.text;
  if (rows.length > 0) {
    text += "\n" + promptLines(rows, rollup).join("\n") + "\n";
  }
  await context.stdout.write(terminalSafe(text, { style: context.color }));
  if (report.hint !== null) await context.stderr.write(report.hint);
  return 0;
}
