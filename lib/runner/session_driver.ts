/**
 * The session driver: one provider session of an attempt. Events come in
 * and are emitted; between them the control plane's commands are applied
 * and steers delivered on the session's lane (sent as input, or the turn
 * interrupted and the thread resumed with the steer); a timeout interrupts;
 * a resumeable failure resumes the thread within the recovery budget.
 *
 * @module
 */

import type { PlannedPrompt } from "./plan_run.ts";
import { classifyFailure, type FailureEnvelope } from "../providers/failure.ts";
import type {
  AttemptMode,
  Session,
  SessionRequest,
} from "../providers/provider.ts";
import type { SteerCommand } from "../shared/run_hooks.ts";
import type { RunContext } from "./_run_context.ts";
import { paced } from "./_paced_events.ts";
import type { AttemptUsage } from "../status/state_file.ts";
import { UsageTally } from "../status/usage_tally.ts";
import { join } from "node:path";
import { ensurePrivateDir } from "../shared/private_files.ts";
import { hostname } from "../shared/run_lock.ts";
import { errorText } from "../shared/errors.ts";
import { CARRY_ON } from "../shared/carry_on.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";
import { AttemptWatch } from "./_attempt_watch.ts";
import { BudgetGuard, type BudgetPassed, spentInRun } from "./budget_guard.ts";

/** How a session ended. */
export interface SessionOutcome {
  /** The first failure, or `null` when the turn ended well. */
  failure: FailureEnvelope | null;
  /** Whether the run was interrupted during the session. */
  interrupted: boolean;
  /** How many failure-resumes it took. */
  resumes: number;
  /** The tokens and cost reported over the attempt's sessions. */
  usage: AttemptUsage;
}

/** Which attempt a session serves. */
export interface AttemptSlot {
  /** The attempt number within the run. */
  attempt: number;
  /** Its place among this process's attempts of the prompt (1 for the first). */
  ordinal: number;
  /** The attempt's mode. */
  mode: AttemptMode;
  /** The text sent to the agent. */
  text: string;
}

/**
 * Runs one attempt's provider session to its end, through any steer- and
 * failure-resumes of its thread.
 */
export async function driveSession(
  ctx: RunContext,
  planned: PlannedPrompt,
  slot: AttemptSlot,
): Promise<SessionOutcome> {
  const { prompt, provider } = planned;
  const { attempt } = slot;
  ctx.providerName = provider.name;
  ctx.output.cwd = prompt.cwd;
  const request: SessionRequest = {
    prompt_id: prompt.id,
    attempt,
    ordinal: slot.ordinal,
    mode: slot.mode,
    text: slot.text,
    cwd: prompt.cwd,
    repos: Object.fromEntries(ctx.packet.repos.map((r) => [r.name, r.path])),
    model: planned.requested_model,
    agent: prompt.agent,
    max_steers: prompt.recovery.max_steers,
    tmpdir: await attemptTmpdir(ctx, prompt.id, attempt),
    note: (text) => ctx.output.note(text),
    signal: ctx.abort.signal,
  };
  const tally = new UsageTally();
  const guard = new BudgetGuard(ctx.packet.budget, prompt.budget, {
    run: spentInRun(ctx.state, ctx.runId),
    prompt: spentInRun(ctx.state, ctx.runId, prompt.id),
  });
  const watch = new AttemptWatch(ctx, {
    promptId: prompt.id,
    attempt,
    progressMs: ctx.options.progressTimeoutMs ?? prompt.progress_timeout_ms,
    guard,
    tally,
  });
  watch.start();
  const remaining = guard.remainingCostUsd();
  if (remaining !== null) request.max_budget_usd = remaining;
  const spent = guard.passed(null);
  if (spent !== null) {
    // Spent before it began (an earlier prompt, an earlier process of the
    // run): no agent is started to spend more.
    await removeTmpdir(request.tmpdir);
    return await stoppedByBudget(ctx, request, spent, tally);
  }
  let session: Session;
  try {
    session = await provider.start(request);
  } catch (error) {
    const message = `cannot start ${provider.name} session: ${
      errorText(error)
    }`;
    await ctx.emit(
      "error_occurred",
      { error_code: "start_failed", error_message: message },
      prompt.id,
      attempt,
    );
    await removeTmpdir(request.tmpdir);
    return {
      failure: {
        ...classifyFailure({ message }),
        failure_class: "start_failed",
        retryable: false,
        repairable: false,
        resumeable: false,
      },
      interrupted: false,
      resumes: 0,
      usage: { input_tokens: 0, output_tokens: 0, cost_usd: null },
    };
  }
  let failure: FailureEnvelope | null = null;
  let resumes = 0;
  let timedOut = false;
  let over: BudgetPassed | null = null;
  const timer = prompt.timeout_ms === null ? undefined : setTimeout(() => {
    timedOut = true;
    ctx.session?.interrupt();
  }, prompt.timeout_ms);
  /** A steer the resumed session has yet to take (its first event). */
  let resumedSteer: SteerCommand | null = null;
  try {
    for (;;) {
      ctx.session = session;
      await recordAgent(ctx, session, provider.name);
      try {
        for await (const event of paced(ctx, session, watch)) {
          tally.observe(event);
          const acknowledgedAt = resumedSteer === null
            ? ""
            : new Date().toISOString();
          await ctx.emit(event.type, event.data, prompt.id, attempt);
          if (resumedSteer !== null) {
            // The resumed CLI answered with the steer on its command line:
            // that is its acknowledgement.
            const steer = resumedSteer;
            resumedSteer = null;
            await ctx.steers.settle(steer, {
              delivered: true,
              delivery: "interrupt_and_resume",
              mechanism: "resume",
              acknowledged_at: acknowledgedAt,
            });
          }
          if (
            failure === null &&
            (event.type === "error_occurred" || event.type === "run_failed")
          ) {
            failure = classifyFailure(
              event.data.provider_error ??
                { message: event.data.error_message },
            );
            if (failure.failure_class === "approval_denied") {
              await watch.denied(failure.message);
            }
          }
          over = await watch.event(event);
          if (over !== null) {
            // Stopped as a stop signal stops it: no event after this one.
            session.interrupt();
            break;
          }
          await ctx.boundary(false);
          if (ctx.aborted) break;
        }
      } catch (error) {
        failure ??= classifyFailure({
          message: `the ${provider.name} stream failed: ${errorText(error)}`,
        });
      }
      if (resumedSteer !== null) {
        await ctx.steers.settle(resumedSteer, {
          delivered: false,
          reason:
            `the resumed ${provider.name} session ended before it took the steer`,
        });
        resumedSteer = null;
      }
      // The session settled every steer it was sent by the end of its events.
      await ctx.steers.drain();
      if (ctx.aborted) {
        session.interrupt();
        return { failure, interrupted: true, resumes, usage: tally.usage };
      }
      if (over !== null) {
        return await stoppedByBudget(ctx, request, over, tally, resumes);
      }
      if (timedOut && failure === null) {
        failure = classifyFailure({
          kind: "transport_timeout",
          message:
            `the session ran longer than its timeout of ${prompt.timeout_ms} ms`,
        });
      }
      const steer = timedOut ? null : ctx.steers.takeInterrupting();
      if (steer !== null) {
        await session.close();
        try {
          session = await provider.resume(session.meta, {
            ...request,
            text: steer.text + CARRY_ON,
            steer: steer.text,
            cause: "steer",
          });
        } catch (error) {
          await ctx.steers.settle(steer, {
            delivered: false,
            reason: `cannot resume the session: ${errorText(error)}`,
          });
          break;
        }
        resumedSteer = steer;
        continue;
      }
      if (
        failure !== null && failure.resumeable &&
        !failure.local_deterministic &&
        resumes < prompt.recovery.resume_attempts && !timedOut
      ) {
        resumes++;
        await ctx.emit(
          "session_resumed",
          {
            prompt_id: prompt.id,
            cause: "failure",
            failure_class: failure.failure_class,
            resume: resumes,
            limit: prompt.recovery.resume_attempts,
          },
          prompt.id,
          attempt,
        );
        await session.close();
        try {
          session = await provider.resume(session.meta, {
            ...request,
            text: "Continue",
            cause: "failure",
          });
        } catch (error) {
          failure = {
            ...failure,
            message: `${failure.message}; resume failed: ${errorText(error)}`,
          };
          break;
        }
        failure = null;
        continue;
      }
      break;
    }
  } finally {
    clearTimeout(timer);
    ctx.session = null;
    await session.close();
    ctx.steers.requeueInterrupting();
    await removeTmpdir(request.tmpdir);
  }
  return { failure, interrupted: false, resumes, usage: tally.usage };
}

/**
 * An attempt a budget stopped (or never let start): `budget_exhausted`,
 * shown in the transcript, and a person told.
 */
async function stoppedByBudget(
  ctx: RunContext,
  request: SessionRequest,
  passed: BudgetPassed,
  tally: UsageTally,
  resumes = 0,
): Promise<SessionOutcome> {
  const failure = classifyFailure({
    kind: "budget_exhausted",
    message: passed.detail,
  });
  await ctx.emit(
    "error_occurred",
    { error_code: "budget_exhausted", error_message: passed.detail },
    request.prompt_id,
    request.attempt,
  );
  await ctx.attention(
    "budget_exhausted",
    request.prompt_id,
    request.attempt,
    passed.detail,
  );
  return { failure, interrupted: false, resumes, usage: tally.usage };
}

async function removeTmpdir(dir: string | null): Promise<void> {
  if (dir !== null) await Deno.remove(dir, { recursive: true }).catch(() => {});
}

/**
 * Records the session's agent process in the attempt's record at once,
 * before anything else can happen to the runner: a runner killed from here
 * on is followed by one that finds the process and stops it.
 */
async function recordAgent(
  ctx: RunContext,
  session: Session,
  provider: string,
): Promise<void> {
  const agent = await session.agentProcess;
  if (agent === undefined || ctx.attempt === null) return;
  ctx.attempt.record.agent = { provider, ...agent, host: hostname() };
  await ctx.saveState();
}

/**
 * A private directory for the agent's temporary files during one attempt
 * (`<state root>/tmp/<run>-<prompt>-<attempt>`), removed when the attempt
 * ends; `null` for an in-memory run or when it cannot be made.
 */
async function attemptTmpdir(
  ctx: RunContext,
  promptId: string,
  attempt: number,
): Promise<string | null> {
  const root = ctx.stateRoot;
  if (root === null) return null;
  const dir = join(
    root,
    STATE_ROOT_NAMES.tmp,
    `${ctx.runId}-${promptId}-${attempt}`,
  );
  try {
    await ctx.guardLinks(() => ensurePrivateDir(dir, { within: root }));
    return dir;
  } catch {
    return null;
  }
}
