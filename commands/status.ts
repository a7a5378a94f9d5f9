/**
 * `prompt_runner status`: the quiet human rollup of a state root's newest
 * run (DESIGN §10), then each prompt's line; `--json` prints the rollup.
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
import {
  gatherStatus,
  type PromptState,
  type StateFile,
  type StatusRollup,
  statusRollup,
} from "../lib/status/mod.ts";
import {
  paint,
  stripAnsi,
  terminalSafe,
  terminalSafeData,
} from "../lib/render/mod.ts";
import { UsageError } from "../lib/shared/mod.ts";
import { parseCommandArgs, stringFlag } from "./_args.ts";
import { WORKSPACE_FLAGS, workspaceFlags } from "./control/_target.ts";
import type { Command, CommandContext } from "./_context.ts";
import { STATUS_INFO } from "./_help.ts";
import { renderStatus, shellWord } from "./status/_report.ts";

const FLAGS = {
  "state-root": { type: "string" },
  ...WORKSPACE_FLAGS,
  json: { type: "boolean" },
} as const;

function verifierLine(state: PromptState | undefined): string {
  const report = state?.last_verifier;
  if (!report) return "-";
  const passed = report.items.filter((item) => item.status === "pass").length;
  const verdict = report.passed ? "pass" : report.faults ? "fault" : "fail";
  return `${verdict} ${passed}/${report.items.length}`;
}

function statusStyle(status: string): "green" | "red" | "yellow" | "dim" {
  if (status === "completed") return "green";
  if (
    status === "running" || status === "retry_scheduled" ||
    status === "repairing"
  ) {
    return "yellow";
  }
  if (status === "not run") return "dim";
  return "red";
}

function pad(text: string, width: number): string {
  return text + " ".repeat(Math.max(0, width - stripAnsi(text).length));
}

/** One line per prompt of the packet: its status, this run's attempts, its verifier. */
function promptLines(
  packet: Packet,
  state: StateFile,
  rollup: StatusRollup,
): string[] {
  const lines: string[] = [];
  for (const prompt of packet.prompts) {
    const entry = state.prompts[prompt.id];
    // A prompt left running by a runner that is gone is not running.
    const status = rollup.run.status === "runner_gone" &&
        entry?.run_id === rollup.run.id &&
        ["running", "retry_scheduled", "repairing"].includes(entry.status)
      ? "runner gone"
      : entry?.status ?? "not run";
    const modes = (entry?.attempts ?? []).filter((a) =>
      a.run_id === entry?.run_id
    ).map((a) => a.mode);
    const attempts = modes.length
      ? `${modes.length} attempt${modes.length === 1 ? "" : "s"}: ${
        modes.join(", ")
      }`
      : "";
    lines.push(
      `  ${prompt.id}  ${pad(paint(status, statusStyle(status)), 20)} ${
        pad(terminalSafe(prompt.name), 28)
      } ${pad(attempts, 30)} verify: ${verifierLine(entry)}`.trimEnd(),
    );
  }
  return lines;
}

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
    text += "\n" + promptLines(packet, inputs.state, rollup).join("\n") + "\n";
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
