/**
 * `prompt_runner status`: the quiet human rollup of a state root's newest
 * run (DESIGN §10), or of a fleet run (§12), then each prompt's line;
 * `--json` prints the rollup.
 *
 * @module
 */

import { loadPacket, type Packet } from "../lib/packet/mod.ts";
import {
  defaultStateRoot,
  isPacketDir,
  resolveRunLocation,
} from "../lib/workspace/mod.ts";
import { resolve } from "../lib/shared/posix_path.ts";
import { gatherStatus, statusRollup } from "../lib/status/mod.ts";
import { terminalSafe, terminalSafeData } from "../lib/render/mod.ts";
import { UsageError } from "../lib/shared/mod.ts";
import { parseCommandArgs, stringFlag } from "./_args.ts";
import { WORKSPACE_FLAGS, workspaceFlags } from "./control/_target.ts";
import type { Command, CommandContext } from "./_context.ts";
import { STATUS_INFO } from "./_help.ts";
import { renderStatus, shellWord } from "./status/_report.ts";
import { promptLines, stateRows } from "./status/_prompt_lines.ts";
import { fleetStatusReport } from "./status/_fleet.ts";
import { FLEET_FLAGS } from "./_fleet_flags.ts";
import { isFleetTarget } from "../lib/fleet/fleet_names.ts";

const FLAGS = {
  "state-root": { type: "string" },
  ...WORKSPACE_FLAGS,
  ...FLEET_FLAGS,
  json: { type: "boolean" },
} as const;

async function tryLoadPacket(dir: string | null): Promise<Packet | null> {
  if (dir === null || dir === "") return null;
  return await loadPacket(dir).catch(() => null);
}

async function status(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("status", argv, FLAGS);
  if (args.values.help) {
    await context.stdout.write(STATUS_INFO.help);
    return 0;
  }
  if (args.positionals.length > 1) {
    throw new UsageError(
      `Too many arguments: expected at most one TARGET, found ${args.positionals.length}`,
      { hint: "Run 'prompt_runner status --help'" },
    );
  }
  if (isFleetTarget(args.positionals[0])) {
    return await fleetStatusReport(context, {
      target: args.positionals[0],
      values: args.values,
    });
  }
  const location = await resolveRunLocation(args.positionals[0], {
    needs: "state_root",
    cwd: context.cwd,
    stateRoot: stringFlag(args, "state-root"),
    ...workspaceFlags(args),
  });
  const workspaceId = location.workspace_id;
  // `status PACKET --state-root DIR` still names the packet.
  const given = resolve(context.cwd, args.positionals[0] ?? ".");
  const packetDir = location.packet_dir ??
    (args.values["state-root"] !== undefined && await isPacketDir(given)
      ? given
      : null);
  // A packet named as TARGET must load; one known only from the snapshot may be gone.
  const named = packetDir === null ? null : await loadPacket(packetDir);
  const { inputs, warnings } = await gatherStatus({
    target: workspaceId ?? packetDir ?? location.state_root,
    workspace_id: workspaceId,
    state_root: location.state_root,
    packet_prompts: named?.prompts.map((p) => ({ id: p.id, name: p.name })) ??
      null,
  });
  const packet = named ??
    await tryLoadPacket(inputs.snapshot?.packet_dir ?? null);
  if (named === null && packet !== null) {
    inputs.packet_prompts = packet.prompts.map((p) => ({
      id: p.id,
      name: p.name,
    }));
    // The run is continued from its packet, not from its state root.
    if (workspaceId === null) inputs.target = packet.dir;
  }
  const rollup = statusRollup(inputs, Date.now());
  for (const warning of warnings) {
    await context.stderr.write(`warning: ${terminalSafe(warning)}\n`);
  }
  if (args.values.json) {
    await context.stdout.json(rollup);
    return 0;
  }
  // Names, reasons, steer texts and paths are anyone's text: made safe first.
  const shown = terminalSafeData(rollup);
  const resumeTarget = [
    shellWord(rollup.target),
    ...(workspaceId === null &&
        location.state_root !== defaultStateRoot(rollup.target)
      ? ["--state-root", shellWord(location.state_root)]
      : []),
  ].join(" ");
  const report = renderStatus(shown, {
    packet: terminalSafe(packet?.name ?? inputs.snapshot?.packet ?? "") ||
      null,
    packetSelection: rollup.run.id !== null &&
      (inputs.snapshot?.prompt_ids ?? null) === null,
    resumeTarget: terminalSafe(resumeTarget),
  });
  let text = report.text;
  if (packet !== null) {
    const rows = stateRows(packet.prompts, inputs.state, rollup.run.id);
    text += "\n" + promptLines(rows, rollup).join("\n") + "\n";
  }
  await context.stdout.write(terminalSafe(text, { style: context.color }));
  if (report.hint !== null) await context.stderr.write(report.hint);
  return 0;
}

/** The `status` command. */
export const statusCommand: Command = {
  ...STATUS_INFO,
  run: status,
};
