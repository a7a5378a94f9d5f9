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
import type { ProviderEvent } from "../shared/events.ts";
import type { SteerCommand } from "../shared/run_hooks.ts";
import { IDLE_TICK_MS, type RunContext } from "./_run_context.ts";
import type { AttemptUsage } from "../status/state_file.ts";
import { UsageTally } from "../status/usage_tally.ts";
import { join } from "node:path";
import { ensurePrivateDir } from "../shared/private_files.ts";
import { hostname } from "../shared/run_lock.ts";
import { errorText } from "../shared/errors.ts";
import { CARRY_ON } from "../shared/carry_on.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";

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
 * Waits with a deadline, for a stream of many short waits: a wait that lasts
 * longer than `ms` resolves with `null`. One timer serves every wait and is
 * re-armed only when it fires (about once per `ms`), not once per event: a
 * timer per event cost more than the rest of an in-memory event's path.
 */
class IdleWatch {
  readonly #ms: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #since = 0;
  #wake: ((value: null) => void) | null = null;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** The promise's value, or `null` when `ms` pass first. */
  async within<T>(promise: Promise<T>): Promise<T | null> {
    this.#since = performance.now();
    const idle = new Promise<null>((resolve) => {
      this.#wake = resolve;
    });
    this.#arm();
    try {
      return await Promise.race([promise, idle]);
    } finally {
      this.#wake = null;
    }
  }

  /** Ends the current wait at once, as if `ms` had passed. */
  wake(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.(null);
  }

  /** Clears the timer. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm(): void {
    if (this.#timer !== undefined) return;
    const due = this.#since + this.#ms - performance.now();
    this.#timer = setTimeout(() => this.#fire(), Math.max(0, due));
  }

  #fire(): void {
    this.#timer = undefined;
    const wake = this.#wake;
    // Nobody waits: the next wait arms the timer again.
    if (wake === null) return;
    if (performance.now() - this.#since < this.#ms) return this.#arm();
    this.#wake = null;
    wake(null);
  }
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
    if (request.tmpdir !== null) {
      await Deno.remove(request.tmpdir, { recursive: true }).catch(() => {});
    }
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
  const tally = new UsageTally();
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
        for await (const event of paced(ctx, session)) {
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
    if (request.tmpdir !== null) {
      await Deno.remove(request.tmpdir, { recursive: true }).catch(() => {});
    }
  }
  return { failure, interrupted: false, resumes, usage: tally.usage };
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

/**
 * Yields a session's events, consuming control requests at least once a
 * second while the provider is quiet (a long think, a slow tool), so a view
 * change or a steer never waits for the next event.
 */
async function* paced(
  ctx: RunContext,
  session: Session,
): AsyncGenerator<ProviderEvent> {
  const iterator = session.events[Symbol.asyncIterator]();
  const watch = new IdleWatch(IDLE_TICK_MS);
  // An agent's acknowledgement of a steer may come with no event after it
  // (Codex's echo): it is reported at once, not at the next idle tick.
  ctx.steers.onKnown = () => watch.wake();
  try {
    for (;;) {
      const next = iterator.next();
      let result: IteratorResult<ProviderEvent> | null = null;
      while (result === null) {
        result = await watch.within(next);
        if (result === null) {
          await ctx.boundary(true);
          if (ctx.aborted) session.interrupt();
        }
      }
      if (result.done) return;
      yield result.value;
    }
  } finally {
    ctx.steers.onKnown = null;
    watch.stop();
    await iterator.return?.();
  }
}
