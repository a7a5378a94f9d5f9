/**
 * The status rollup (DESIGN §10): everything a state root says about its
 * newest run, reconciled into one object. Pure: the files are read by
 * `gather_status.ts`, and the clock and host are given.
 *
 * @module
 */

import type {
  LastAmendment,
  LastSteer,
  RunWord,
  StatusInputs,
  StatusRollup,
} from "./status_types.ts";
import type { AttemptRecord } from "./state_file.ts";
import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { LogEntry } from "../control/log_entry.ts";

const FAILED = ["failed", "verification_failed", "verifier_fault", "blocked"];
const UNFINISHED = ["running", "retry_scheduled", "repairing"];

function runWord(inputs: StatusInputs, runId: string | null): RunWord {
  const { snapshot, lock, last_event: last } = inputs;
  if (runId === null) return "never_run";
  let ended: string | null = null;
  if (last?.type === "run_finished" && last.run_id === runId) {
    ended = String(last.data.status ?? "failed");
  } else if (snapshot !== null && snapshot.status !== "running") {
    ended = snapshot.status;
  }
  if (ended !== null) {
    return ended === "completed" || ended === "interrupted" ? ended : "failed";
  }
  const info = lock?.info ?? null;
  if (info !== null && (info.run_id === runId || lock?.alive)) {
    if (info.host !== inputs.host || lock?.alive) return "running";
    return "runner_gone";
  }
  if (snapshot !== null) return "runner_gone";
  // No snapshot (its control files were removed): state.json alone tells.
  const prompts = Object.values(inputs.state.prompts).filter((p) =>
    p.run_id === runId
  );
  if (prompts.some((p) => UNFINISHED.includes(p.status))) return "runner_gone";
  if (prompts.some((p) => FAILED.includes(p.status))) return "failed";
  if (prompts.some((p) => p.status === "interrupted")) return "interrupted";
  return "completed";
}

function leaseOf(inputs: StatusInputs): StatusRollup["lease"] {
  const info = inputs.lock?.info ?? null;
  if (info === null) return { state: "none", pid: null, host: null };
  const state = info.host !== inputs.host
    ? "other_host"
    : inputs.lock?.alive
    ? "alive"
    : "gone";
  return { state, pid: info.pid, host: info.host };
}

function runAttempts(
  inputs: StatusInputs,
  runId: string | null,
  promptId: string | null,
): AttemptRecord[] {
  if (runId === null || promptId === null) return [];
  return (inputs.state.prompts[promptId]?.attempts ?? []).filter((a) =>
    a.run_id === runId
  );
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function attemptDetail(
  attempts: AttemptRecord[],
  number: number | null,
  ending: string | null,
): string | null {
  const index = attempts.findIndex((a) => a.attempt === number);
  const current = index >= 0 ? attempts[index]! : attempts.at(-1);
  if (current === undefined) return ending;
  const before = index > 0 ? attempts[index - 1] : undefined;
  const parts: string[] = [];
  if (current.mode === "retry" && before) {
    parts.push(`retry after ${before.failure_class ?? before.status}`);
  }
  if (current.mode === "repair" && before) {
    const v = before.verifier;
    const unmet = v ? v.failures + v.faults : 0;
    parts.push(`repair after ${plural(unmet, "unmet item")}`);
  }
  if (current.resumes > 0) {
    parts.push(
      `session resumed ${
        current.resumes === 1 ? "once" : `${current.resumes} times`
      }`,
    );
  }
  if (current.status === "verification_failed") {
    // The verifier's unmet items say the rest.
    parts.push("verification failed");
  } else if (current.status !== "running" && current.status !== "completed") {
    parts.push(
      `${current.status.replaceAll("_", " ")}${
        current.reason ? `: ${current.reason}` : ""
      }`,
    );
  } else if (ending !== null) {
    parts.push(ending);
  }
  return parts.length ? parts.join("; ") : null;
}

function verifierOf(attempts: AttemptRecord[]): StatusRollup["verifier"] {
  const report = attempts.findLast((a) => a.verifier !== null)?.verifier;
  if (!report) return { passed: null, unmet: [] };
  return {
    passed: report.passed,
    unmet: report.items.filter((i) => i.status !== "pass").map((i) => ({
      clause: i.clause,
      label: i.label,
      status: i.status as "fail" | "fault",
      reason: i.reason,
    })),
  };
}

/** Tokens and cost over the run: finished attempts from state.json, the live one from the snapshot. */
function usageOf(
  inputs: StatusInputs,
  runId: string,
): { input: number; output: number; cost: number | null } {
  const snap = inputs.snapshot;
  let input = 0;
  let output = 0;
  let cost: number | null = null;
  let liveCounted = false;
  for (const [id, prompt] of Object.entries(inputs.state.prompts)) {
    for (const a of prompt.attempts) {
      if (a.run_id !== runId) continue;
      const live = snap !== null && snap.run_id === runId &&
        snap.prompt_id === id && snap.attempt === a.attempt;
      if (live && (a.status === "running" || a.usage === undefined)) continue;
      if (live) liveCounted = true;
      if (a.usage === undefined) continue;
      input += a.usage.input_tokens;
      output += a.usage.output_tokens;
      if (a.usage.cost_usd !== null) cost = (cost ?? 0) + a.usage.cost_usd;
    }
  }
  if (snap !== null && snap.run_id === runId && !liveCounted) {
    input += snap.input_tokens;
    output += snap.output_tokens;
    if (snap.cost_usd !== null) cost = (cost ?? 0) + snap.cost_usd;
  }
  return {
    input,
    output,
    cost: cost === null ? null : Math.round(cost * 1e6) / 1e6,
  };
}

function lastSteer(log: LogEntry[]): LastSteer | null {
  const entry = log.findLast((e) => e.command === "steer");
  if (entry === undefined) return null;
  const text = (entry.params as Record<string, unknown> | null)?.text;
  return {
    at: entry.at,
    author: entry.author ?? null,
    text: typeof text === "string" ? text : null,
    prompt_id: entry.prompt_id ?? null,
    outcome: entry.outcome,
    reason: entry.reason ?? null,
  };
}

function lastAmendment(records: AmendmentRecord[]): LastAmendment | null {
  const last = records.reduce<AmendmentRecord | null>(
    (newest, r) => newest === null || r.at >= newest.at ? r : newest,
    null,
  );
  if (last === null) return null;
  return {
    at: last.at,
    author: last.author,
    prompt_id: last.prompt,
    direction: last.direction,
    clause: last.clause,
    operation: last.operation,
    reason: last.reason,
  };
}

/**
 * Reconciles what a state root holds into the status rollup.
 *
 * @param inputs What was read.
 * @param now The current time (ms since the epoch).
 */
export function statusRollup(inputs: StatusInputs, now: number): StatusRollup {
  const snap = inputs.snapshot;
  const runId = snap?.run_id ?? inputs.state.run_id ?? null;
  const status = runWord(inputs, runId);
  const selectedIds = snap?.prompt_ids ??
    inputs.packet_prompts?.map((p) => p.id) ?? null;
  const ofRun = (id: string): string | null => {
    const entry = inputs.state.prompts[id];
    return entry !== undefined && entry.run_id === runId ? entry.status : null;
  };
  const currentId = snap?.prompt_id ?? null;
  const attempts = runAttempts(inputs, runId, currentId);
  const last = inputs.last_event;
  const ending = last?.type === "run_finished" && last.run_id === runId &&
      typeof last.data.reason === "string"
    ? last.data.reason
    : null;
  const started = snap?.run_started_at ? Date.parse(snap.run_started_at) : NaN;
  const usage = runId === null ? null : usageOf(inputs, runId);
  const lastAge = last !== null && last.run_id === runId
    ? Math.max(0, now - Date.parse(last.at))
    : null;
  return {
    v: 1,
    target: inputs.target,
    workspace_id: inputs.workspace_id,
    state_root: inputs.state_root,
    run: {
      id: runId,
      status,
      started_at: snap?.run_started_at || null,
      elapsed_ms: snap === null
        ? null
        : status === "running" && Number.isFinite(started) &&
            snap.host === inputs.host
        ? Math.max(snap.elapsed_ms, now - started)
        : snap.elapsed_ms,
      started_by: snap?.started_by ?? null,
    },
    progress: {
      selected: runId === null ? null : selectedIds?.length ?? null,
      completed: runId === null || selectedIds === null
        ? null
        : selectedIds.filter((id) => ofRun(id) === "completed").length,
      failed: runId === null || selectedIds === null
        ? null
        : selectedIds.filter((id) => FAILED.includes(ofRun(id) ?? "")).length,
      current: { id: currentId, name: snap?.prompt_name ?? null },
    },
    attempt: {
      number: snap?.attempt ?? null,
      mode: snap?.mode ?? null,
      detail: runId === null
        ? null
        : attemptDetail(attempts, snap?.attempt ?? null, ending),
    },
    verifier: verifierOf(attempts),
    provider: {
      name: snap?.provider ?? null,
      model: snap?.model || null,
      last_event_age_ms: lastAge !== null && Number.isFinite(lastAge)
        ? lastAge
        : null,
      input_tokens: usage?.input ?? null,
      output_tokens: usage?.output ?? null,
      cost_usd: usage?.cost ?? null,
    },
    steers: {
      count: inputs.delivered_steers,
      last: lastSteer(inputs.log),
    },
    amendments: {
      count: inputs.amendments.length,
      last: lastAmendment(inputs.amendments),
    },
    service: {
      agent_pid: snap?.agent_pid ?? null,
      alive: snap?.agent_pid ? inputs.agent_alive : null,
    },
    lease: leaseOf(inputs),
    attention: snap !== null && snap.run_id === runId ? snap.attention : null,
    budget: snap !== null && snap.run_id === runId ? snap.budget : null,
  };
}
