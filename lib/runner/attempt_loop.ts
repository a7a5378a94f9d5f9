/**
 * The attempt loop of one prompt: attempts in their modes (run, retry,
 * repair), verification against the enforced contract, and the recovery
 * policy's decision after each attempt.
 *
 * @module
 */

import type { PromptSpec } from "../packet/load_packet.ts";
import type { AttemptMode } from "../providers/provider.ts";
import { sleep } from "../shared/sleep.ts";
import type { VerifyReport } from "../verify/report.ts";
import { verifyContract } from "../verify/verify_contract.ts";
import { probeGitChanges, probesDiffer } from "./_git_probe.ts";
import type { RunContext } from "./_run_context.ts";
import {
  type EnforcedContract,
  promptContract,
} from "../contract/enforced_contract.ts";
import type { PlannedPrompt } from "./plan_run.ts";
import { decideOutcome, type RecoveryDecision } from "./recovery_policy.ts";
import { buildRepairPrompt } from "./repair_prompt.ts";
import type { PromptOutcome } from "./run_options.ts";
import { driveSession } from "./session_driver.ts";
import { type PromptState, startedAttempt } from "../status/state_file.ts";
import { errorText } from "../shared/errors.ts";

/**
 * Runs a prompt's attempts until the recovery policy settles it.
 *
 * @returns The prompt's outcome in this run.
 */
export async function runAttempts(
  ctx: RunContext,
  planned: PlannedPrompt,
): Promise<PromptOutcome> {
  const { prompt, provider, model } = planned;
  const entry = ctx.promptState(prompt.id, prompt.name);
  delete entry.blocked_by;
  const roots = [
    prompt.cwd,
    ...prompt.targets.map((name) =>
      ctx.packet.repos.find((repo) => repo.name === name)!.path
    ),
  ];
  const ignore = ctx.stateRoot === null ? [] : [ctx.stateRoot];
  const baseline = await probeGitChanges(roots, ignore);
  const modes: AttemptMode[] = [];
  let retries = 0;
  let repairs = 0;
  let mode: AttemptMode = "run";
  let text = prompt.body;
  let outcome: PromptOutcome;
  // A resumed run continues the numbering of its attempts.
  const first = 1 + Math.max(
    0,
    ...entry.attempts.filter((a) => a.run_id === ctx.runId).map((a) =>
      a.attempt
    ),
  );
  for (let attempt = first;; attempt++) {
    modes.push(mode);
    const record = startedAttempt(
      ctx.runId,
      attempt,
      mode,
      new Date().toISOString(),
    );
    entry.attempts.push(record);
    ctx.attempt = { entry, record };
    entry.status = "running";
    entry.updated_at = record.started_at;
    ctx.inFlight = { prompt: prompt.id, attempt };
    await ctx.output.closeTranscript();
    if (ctx.stateRoot !== null) {
      await ctx.output.openTranscript({
        root: ctx.stateRoot,
        runId: ctx.runId,
        promptId: prompt.id,
        record,
        text,
        guardLinks: (work) => ctx.guardLinks(work),
      });
    }
    await ctx.saveState();
    const started = {
      prompt_id: prompt.id,
      name: prompt.name,
      attempt,
      mode,
      provider: provider.name,
      model,
    };
    await ctx.hooks.promptStarted?.({
      ...started,
      max_steers: prompt.recovery.max_steers,
    });
    await ctx.emit("prompt_started", started, prompt.id, attempt);
    // The attempt has begun: its transcript shows it now, not a batch later.
    await ctx.output.flushTranscript();
    const before = await probeGitChanges(roots, ignore);
    const session = await driveSession(ctx, planned, {
      attempt,
      ordinal: attempt - first + 1,
      mode,
      text,
    });
    record.resumes = session.resumes;
    record.failure_class = session.failure?.failure_class ?? null;
    record.usage = session.usage;
    if (session.interrupted) {
      record.status = "interrupted";
      record.finished_at = new Date().toISOString();
      record.reason = "the run was interrupted";
      outcome = await finishPrompt(
        ctx,
        planned,
        entry,
        "interrupted",
        record.reason,
        modes,
      );
      break;
    }
    let enforced: EnforcedContract | null = null;
    let contractError: string | null = null;
    try {
      enforced = await enforcedFor(ctx, prompt);
    } catch (error) {
      // An unreadable contract stops this prompt's verification: no verdict.
      contractError = errorText(error);
    }
    const report: VerifyReport = enforced === null
      ? { passed: false, items: [], failures: 0, faults: 1 }
      : await ctx.whileIdle(
        verifyContract(enforced.contract, {
          cwd: prompt.cwd,
          repos: Object.fromEntries(
            ctx.packet.repos.map((repo) => [repo.name, repo.path]),
          ),
          ignore,
          baseline,
        }),
      );
    if (enforced !== null) recordAmendments(entry, enforced);
    await ctx.emit(
      "verification_finished",
      {
        prompt_id: prompt.id,
        passed: report.passed,
        failures: report.failures,
        faults: report.faults,
        items: report.items.map(({ clause, label, status, reason }) => ({
          clause,
          label,
          status,
          reason,
        })),
        ...(contractError === null ? {} : { error: contractError }),
      },
      prompt.id,
      attempt,
    );
    const after = await probeGitChanges(roots, ignore);
    const decision: RecoveryDecision = contractError !== null
      ? {
        kind: "verifier_fault",
        reason: `cannot verify: ${contractError}`,
      }
      : decideOutcome({
        failure: session.failure,
        report,
        retries,
        repairs,
        recovery: prompt.recovery,
        workspace_changed: probesDiffer(before, after) ||
          (Object.keys(after).length === 0 && evidenceOfWork(report)),
        ...(ctx.options.random ? { random: ctx.options.random } : {}),
      });
    record.finished_at = new Date().toISOString();
    record.verifier = report;
    record.reason = decision.reason;
    entry.last_verifier = report;
    entry.failure_class = session.failure?.failure_class ?? null;
    if (decision.kind === "complete") {
      record.status = "completed";
      outcome = await finishPrompt(
        ctx,
        planned,
        entry,
        "completed",
        decision.reason,
        modes,
      );
      break;
    }
    if (decision.kind === "retry") {
      record.status = "failed";
      entry.status = "retry_scheduled";
      entry.reason = decision.reason;
      await ctx.saveState();
      await ctx.emit(
        "retry_scheduled",
        {
          prompt_id: prompt.id,
          failure_class: session.failure?.failure_class ?? "unknown",
          delay_ms: decision.delay_ms,
          reason: decision.reason,
          next_attempt: attempt + 1,
        },
        prompt.id,
        attempt,
      );
      await ctx.whileIdle(sleep(decision.delay_ms, ctx.abort.signal));
      if (ctx.aborted) {
        outcome = await finishPrompt(
          ctx,
          planned,
          entry,
          "interrupted",
          "the run was interrupted",
          modes,
        );
        break;
      }
      retries++;
      mode = "retry";
      continue;
    }
    if (decision.kind === "repair") {
      record.status = session.failure ? "failed" : "verification_failed";
      entry.status = "repairing";
      entry.reason = decision.reason;
      await ctx.saveState();
      repairs++;
      mode = "repair";
      text = buildRepairPrompt(
        prompt.body,
        report,
        session.failure
          ? `${session.failure.failure_class}: ${session.failure.message}`
          : null,
      );
      continue;
    }
    const final = decision.kind === "provider_failed"
      ? "failed"
      : decision.kind;
    record.status = final === "failed" ? "failed" : final;
    outcome = await finishPrompt(
      ctx,
      planned,
      entry,
      final,
      decision.reason,
      modes,
    );
    break;
  }
  return outcome;
}

async function finishPrompt(
  ctx: RunContext,
  planned: PlannedPrompt,
  entry: PromptState,
  status: PromptState["status"],
  reason: string | null,
  modes: AttemptMode[],
): Promise<PromptOutcome> {
  const { prompt } = planned;
  entry.status = status;
  entry.reason = reason;
  entry.updated_at = new Date().toISOString();
  const steers = ctx.hooks.steerCount?.(prompt.id) ?? 0;
  if (steers > 0) {
    entry.steered = true;
    entry.steer_count = steers;
    if (ctx.stateRoot !== null) {
      entry.interventions_file = `interventions/${prompt.id}.jsonl`;
    }
  } else {
    entry.steered = false;
    delete entry.steer_count;
    delete entry.interventions_file;
  }
  await ctx.output.closeTranscript();
  await ctx.steers.refuseWaiting(
    prompt.id,
    `prompt ${prompt.id} finished (${status}) before the steer could be delivered`,
  );
  ctx.inFlight = null;
  await ctx.saveState();
  const outcome = { status, reason, attempts: modes };
  ctx.outcomes[prompt.id] = outcome;
  const attempt = entry.attempts.at(-1)?.attempt ?? modes.length;
  await ctx.emit(
    status === "completed" ? "prompt_completed" : "prompt_failed",
    { prompt_id: prompt.id, status, reason, attempts: modes.length },
    prompt.id,
    attempt,
  );
  await failedForGood(ctx, prompt.id, attempt, status, reason);
  return outcome;
}

/**
 * A prompt that failed for good needs a person (unless its last attempt
 * already said why: a spent budget, a refused permission).
 */
async function failedForGood(
  ctx: RunContext,
  promptId: string,
  attempt: number,
  status: PromptState["status"],
  reason: string | null,
): Promise<void> {
  if (
    status !== "failed" && status !== "verification_failed" &&
    status !== "verifier_fault"
  ) return;
  if (
    ctx.raised("budget_exhausted", promptId, attempt) ||
    ctx.raised("approval_denied", promptId, attempt)
  ) return;
  await ctx.attention(
    status === "verifier_fault" ? "verifier_fault" : "failed",
    promptId,
    attempt,
    `prompt ${promptId}: ${reason ?? status.replaceAll("_", " ")}`,
  );
}

/**
 * The contract this verification enforces: exactly what `control contract`
 * shows now. The prompt file is read again rather than taken from the
 * packet loaded at start, since `amend --persist` rewrites it (and records
 * the change as persisted, which replay skips) while the prompt may run.
 */
async function enforcedFor(
  ctx: RunContext,
  prompt: PromptSpec,
): Promise<EnforcedContract> {
  const repos = ctx.packet.repos.map((repo) => repo.name);
  if (ctx.options.contract) {
    const { packet } = await promptContract(prompt, {
      stateRoot: null,
      repos,
      packetDir: ctx.packet.dir,
    });
    return await ctx.options.contract(prompt.id, packet);
  }
  const { contract, amendments, amendments_file } = await promptContract(
    prompt,
    { stateRoot: ctx.stateRoot, repos, packetDir: ctx.packet.dir },
  );
  return { contract, amendments, amendments_file };
}

function recordAmendments(
  entry: PromptState,
  enforced: EnforcedContract,
): void {
  if (enforced.amendments.length > 0) {
    entry.amended = true;
    entry.amendments = enforced.amendments;
    if (enforced.amendments_file) {
      entry.amendments_file = enforced.amendments_file;
    }
  } else {
    entry.amended = false;
    delete entry.amendments;
    delete entry.amendments_file;
  }
}

function evidenceOfWork(report: VerifyReport): boolean {
  return report.items.some((item) =>
    item.status === "pass" &&
    (item.clause === "files_exist" || item.clause === "contains" ||
      item.clause === "matches")
  );
}
