/**
 * `prompt_runner status`: each prompt's status, attempts and last verifier
 * result.
 *
 * @module
 */

import { loadPacket } from "../lib/packet/mod.ts";
import { resolveRunLocation } from "../lib/workspace/mod.ts";
import {
  type AttemptRecord,
  type PromptState,
  readState,
} from "../lib/runner/mod.ts";
import {
  paint,
  stripAnsi,
  terminalSafe,
  terminalSafeData,
} from "../lib/render/mod.ts";
import { readRunLock, UsageError } from "../lib/shared/mod.ts";
import { parseCommandArgs, stringFlag } from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { STATUS_INFO } from "./_help.ts";

const FLAGS = {
  "state-root": { type: "string" },
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
    needs: "packet",
    cwd: context.cwd,
    stateRoot: stringFlag(args, "state-root"),
  });
  const packet = await loadPacket(location.packet_dir);
  const state = await readState(location.state_root);
  const lock = await readRunLock(location.state_root);
  const prompts = packet.prompts.map((prompt) => {
    const entry = state.prompts[prompt.id];
    return {
      id: prompt.id,
      name: prompt.name,
      status: entry?.status ?? "not run",
      reason: entry?.reason ?? null,
      run_id: entry?.run_id ?? null,
      attempts: (entry?.attempts ?? []).map((a: AttemptRecord) => ({
        run_id: a.run_id,
        attempt: a.attempt,
        mode: a.mode,
        status: a.status,
        started_at: a.started_at,
        finished_at: a.finished_at,
        resumes: a.resumes,
        failure_class: a.failure_class,
        reason: a.reason,
        verifier: a.verifier
          ? {
            passed: a.verifier.passed,
            failures: a.verifier.failures,
            faults: a.verifier.faults,
          }
          : null,
        transcript: a.transcript,
      })),
      last_verifier: entry?.last_verifier ?? null,
      steered: entry?.steered ?? false,
      amended: entry?.amended ?? false,
    };
  });
  const lease = lock === null
    ? null
    : { alive: lock.alive, ...(lock.info ?? {}) };
  if (args.values.json) {
    await context.stdout.json({
      v: 1,
      packet: { name: packet.name, dir: packet.dir },
      state_root: location.state_root,
      run_id: state.run_id,
      updated_at: state.updated_at,
      lock: lease,
      prompts,
    });
    return 0;
  }
  // Names, reasons and paths are anyone's text: made safe before styling.
  const shown = terminalSafeData({
    name: packet.name,
    dir: packet.dir,
    run_id: state.run_id,
    prompts,
  });
  const lines: string[] = [];
  lines.push(
    `${paint("packet", "dim")}  ${shown.name}  ${paint(shown.dir, "dim")}`,
  );
  const runLine = shown.run_id === null
    ? "no run yet"
    : `${shown.run_id}  ${
      lease?.alive && lease.run_id === state.run_id
        ? paint(`running (pid ${lease.pid})`, "yellow")
        : "not running"
    }`;
  lines.push(`${paint("run", "dim")}     ${runLine}`);
  lines.push("");
  for (const prompt of shown.prompts) {
    const modes = prompt.attempts.filter((a) => a.run_id === prompt.run_id);
    const attempts = modes.length
      ? `${modes.length} attempt${modes.length === 1 ? "" : "s"}: ${
        modes.map((a) => a.mode).join(", ")
      }`
      : "";
    lines.push(
      `  ${prompt.id}  ${
        pad(paint(prompt.status, statusStyle(prompt.status)), 20)
      } ${pad(prompt.name, 28)} ${pad(attempts, 30)} verify: ${
        verifierLine(state.prompts[prompt.id])
      }`,
    );
    if (prompt.reason && prompt.status !== "completed") {
      lines.push(`      ${paint(prompt.reason, "dim")}`);
    }
  }
  await context.stdout.write(
    terminalSafe(lines.join("\n") + "\n", { style: context.color }),
  );
  return 0;
}

/** The `status` command. */
export const statusCommand: Command = {
  ...STATUS_INFO,
  run: status,
};
