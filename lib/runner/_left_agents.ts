/**
 * Agents a killed runner left behind: a runner killed outright (SIGKILL, an
 * OOM kill) cannot stop its agent CLI, which runs on in its own process
 * group and keeps changing the repo. The next run of the state root (a
 * `--resume` or not) holds the run lock, so no live runner is behind an
 * attempt still recorded `running`: before anything starts, the agent
 * process that attempt recorded is stopped (SIGTERM, a grace period, then
 * SIGKILL), with everything it started, in its group or in sessions of
 * their own. What was stopped is said on stderr (a warning), in the audit
 * log (`control/log.jsonl`, command `agent_stopped`) and at the end of the
 * killed attempt's transcript. An agent that cannot be stopped refuses the
 * run (exit 4); one that ran on another host cannot be checked, and is
 * warned about (that host's run lock refused every run from here until it
 * was removed).
 *
 * @module
 */

import { join } from "node:path";
import { controlPaths } from "../control/paths.ts";
import { appendLogEntry } from "../control/log_entry.ts";
import { appendLine } from "../shared/files.ts";
import { errorText, StateError } from "../shared/errors.ts";
import {
  describeProcess,
  stopAgent,
  type StoppedProcess,
} from "../shared/process_tree.ts";
import { hostname } from "../shared/run_lock.ts";
import type { RunContext } from "./_run_context.ts";
import type { AgentRecord, AttemptRecord } from "../status/state_file.ts";

/** How long a left agent has after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3000;
/** How long SIGKILL is waited for before the run is refused. */
const KILL_WAIT_MS = 5000;

/**
 * Stops every agent process that attempts recorded `running` left behind
 * (the caller holds the run lock).
 *
 * @throws {StateError} when one cannot be stopped.
 */
export async function stopLeftAgents(ctx: RunContext): Promise<void> {
  for (const [promptId, entry] of Object.entries(ctx.state.prompts)) {
    for (const record of entry.attempts) {
      if (record.status !== "running" || !isAgentRecord(record.agent)) {
        continue;
      }
      await stopLeftAgent(ctx, promptId, record, record.agent);
    }
  }
}

function isAgentRecord(value: unknown): value is AgentRecord {
  if (typeof value !== "object" || value === null) return false;
  const agent = value as Record<string, unknown>;
  return Number.isInteger(agent.pid) && (agent.pid as number) > 0 &&
    typeof agent.host === "string" &&
    (agent.pid_start === null || typeof agent.pid_start === "string") &&
    (agent.env === null || typeof agent.env === "string");
}

async function stopLeftAgent(
  ctx: RunContext,
  promptId: string,
  record: AttemptRecord,
  agent: AgentRecord,
): Promise<void> {
  const cli = typeof agent.provider === "string"
    ? `the ${agent.provider} CLI`
    : "the agent CLI";
  const who =
    `${cli} the previous runner left running (prompt ${promptId}, attempt ${record.attempt}, pid ${agent.pid})`;
  if (agent.host !== hostname()) {
    // The lock of that host's runner refused every run from here until
    // someone removed it: that host, or its runner, is gone.
    await ctx.options.warn?.(
      `cannot check ${who}: it ran on host ${
        JSON.stringify(agent.host)
      }, not this one; make sure it no longer runs there`,
    );
    return;
  }
  const report = await stopAgent(agent, {
    graceMs: STOP_GRACE_MS,
    killWaitMs: KILL_WAIT_MS,
  });
  if (report.stopped.length > 0) {
    await recordStopped(ctx, promptId, record, agent, who, report.stopped);
  }
  if (report.left.length > 0) {
    const pids = report.left.map((entry) => entry.pid).join(" ");
    throw new StateError(
      `Cannot start the run: ${who} could not be stopped: ${
        report.left.map((entry) => describeProcess(entry)).join(", ")
      } still ${report.left.length === 1 ? "runs" : "run"} after SIGKILL`,
      {
        code: "AGENT_NOT_STOPPED",
        hint: `Stop ${
          pids.includes(" ") ? "them" : "it"
        } (kill -KILL ${pids}), then run again`,
      },
    );
  }
}

/** Says what was stopped: stderr, the audit log, the attempt's transcript. */
async function recordStopped(
  ctx: RunContext,
  promptId: string,
  record: AttemptRecord,
  agent: AgentRecord,
  who: string,
  stopped: StoppedProcess[],
): Promise<void> {
  const root = ctx.stateRoot!;
  const list = stopped.map(({ process, signal }) =>
    describeProcess(process, signal)
  ).join(", ");
  const message = `stopped ${who}: ${list}`;
  await ctx.options.warn?.(message);
  const notes: string[] = [];
  try {
    await ctx.guardLinks(() =>
      appendLogEntry(controlPaths(root), {
        run_id: ctx.runId,
        request_id: null,
        command: "agent_stopped",
        params: {
          run_id: record.run_id,
          provider: agent.provider ?? null,
          pid: agent.pid,
          pid_start: agent.pid_start,
          stopped: stopped.map(({ process, signal }) => ({
            pid: process.pid,
            pid_start: process.start,
            name: process.name,
            signal,
          })),
        },
        author: "runner",
        outcome: "applied",
        reason: message,
        prompt_id: promptId,
        attempt: record.attempt,
      })
    );
  } catch (error) {
    notes.push(`cannot log it: ${errorText(error)}`);
  }
  if (typeof record.transcript === "string") {
    const path = join(root, record.transcript);
    try {
      await ctx.guardLinks(() =>
        appendLine(
          path,
          `[prompt_runner] ${new Date().toISOString()} ${message}`,
          { within: root },
        )
      );
    } catch (error) {
      notes.push(
        `cannot add it to the transcript: ${errorText(error)}`,
      );
    }
  }
  for (const note of notes) await ctx.options.warn?.(note);
}
