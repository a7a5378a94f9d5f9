/**
 * The steer queue: steers the control plane handed over and the lane has
 * not yet taken, their delivery on the session's lane, and their refusal.
 * It counts nothing: the hooks' steer ledger owns the counts.
 *
 * @module
 */

import {
  type Session,
  type SteerLane,
  steerLane,
} from "../providers/provider.ts";
import type { SteerCommand, SteerResult } from "../shared/run_hooks.ts";
import { errorText } from "../shared/errors.ts";

/** What the queue reports a steer's fate to. */
export interface SteerQueueReport {
  /** The attempt and provider a steer for this prompt lands in now. */
  where(promptId: string): { attempt: number | null; provider: string | null };
  /** Tells the hooks (`steerSettled`). */
  settled(result: SteerResult): Promise<void>;
  /** Emits `prompt_steered` for a delivered steer. */
  steered(
    steer: SteerCommand,
    delivery: SteerLane,
    attempt: number | null,
  ): Promise<void>;
}

/**
 * Steers waiting for the lane, in arrival order. A session that accepts
 * input takes a steer at once (send_input); otherwise the turn is
 * interrupted and the steer waits in `interrupting` until the session
 * driver resumes the thread with it (interrupt_and_resume).
 */
export class SteerQueue {
  readonly #report: SteerQueueReport;
  #waiting: SteerCommand[] = [];
  #interrupting: SteerCommand | null = null;

  constructor(report: SteerQueueReport) {
    this.#report = report;
  }

  /** Queues a steer the hooks handed over. */
  push(steer: SteerCommand): void {
    this.#waiting.push(steer);
  }

  /**
   * Delivers the first waiting steer on the session's lane, unless a steer
   * is already interrupting the turn or no session is live.
   */
  async deliver(session: Session | null): Promise<void> {
    if (session === null || this.#interrupting !== null) return;
    const steer = this.#waiting.shift();
    if (steer === undefined) return;
    if (steerLane(session) === "send_input") {
      try {
        await session.send(steer.text);
      } catch (error) {
        await this.settle(
          steer,
          false,
          undefined,
          `the live session refused it: ${errorText(error)}`,
        );
        return;
      }
      await this.settle(steer, true, "send_input");
      return;
    }
    if (!session.meta.session_id) {
      // Resuming without the thread's id would start a fresh session.
      await this.settle(
        steer,
        false,
        undefined,
        "the agent has not reported its session id yet, so the turn cannot be interrupted and resumed on the same session",
      );
      return;
    }
    this.#interrupting = steer;
    session.interrupt();
  }

  /** Takes the steer that interrupted the turn, for the resume to carry. */
  takeInterrupting(): SteerCommand | null {
    const steer = this.#interrupting;
    this.#interrupting = null;
    return steer;
  }

  /**
   * Puts a steer that interrupted a session which then ended back at the
   * head of the queue: the next session of its prompt takes it.
   */
  requeueInterrupting(): void {
    const steer = this.takeInterrupting();
    if (steer !== null) this.#waiting.unshift(steer);
  }

  /** Reports a steer delivered (with how) or refused (with why). */
  async settle(
    steer: SteerCommand,
    delivered: boolean,
    delivery?: SteerLane,
    reason?: string,
  ): Promise<void> {
    const { attempt, provider } = this.#report.where(steer.prompt_id);
    await this.#report.settled({
      command: steer,
      delivered,
      ...(delivery ? { delivery } : {}),
      ...(reason ? { reason } : {}),
      attempt,
      provider,
    });
    if (delivered && delivery) {
      await this.#report.steered(steer, delivery, attempt);
    }
  }

  /** Refuses every steer still waiting for a prompt (it finished). */
  async refuseWaiting(promptId: string, reason: string): Promise<void> {
    const waiting = this.#waiting.filter((s) => s.prompt_id === promptId);
    this.#waiting = this.#waiting.filter((s) => s.prompt_id !== promptId);
    for (const steer of waiting) {
      await this.settle(steer, false, undefined, reason);
    }
  }
}
