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
  type SteerReceipt,
  TurnOverError,
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
    how: { delivery: SteerLane; mechanism: string },
    attempt: number | null,
  ): Promise<void>;
}

/** How a steer's delivery ended. */
export type SteerFate =
  | {
    /** The agent acknowledged it. */
    delivered: true;
    /** The lane it took. */
    delivery: SteerLane;
    /** What delivered it (the session's acknowledgement). */
    mechanism: string;
    /** When the agent acknowledged it (ISO 8601). */
    acknowledged_at: string;
  }
  | {
    /** It was refused. */
    delivered: false;
    /** Why. */
    reason: string;
  };

/** A steer written to the live session, waiting for the agent to take it. */
interface InFlight {
  steer: SteerCommand;
  fate: SteerFate | null;
  known: Promise<void>;
}

/**
 * Steers waiting for the lane, in arrival order. A session that accepts
 * input takes a steer at once (send_input) and the steer is in flight until
 * the agent acknowledges it; otherwise the turn is interrupted and the
 * steer waits in `interrupting` until the session driver resumes the
 * thread with it (interrupt_and_resume). A steer is reported delivered
 * only with the agent's acknowledgement, refused with the reason otherwise.
 */
export class SteerQueue {
  readonly #report: SteerQueueReport;
  #waiting: SteerCommand[] = [];
  #interrupting: SteerCommand | null = null;
  #inFlight: InFlight[] = [];
  /** Called when an in-flight steer's fate becomes known. */
  onKnown: (() => void) | null = null;

  constructor(report: SteerQueueReport) {
    this.#report = report;
  }

  /** Queues a steer the hooks handed over. */
  push(steer: SteerCommand): void {
    this.#waiting.push(steer);
  }

  /**
   * Reports the steers the agent acknowledged (or refused) since the last
   * call, then delivers the first waiting steer on the session's lane,
   * unless a steer is already interrupting the turn or no session is live.
   */
  async deliver(session: Session | null): Promise<void> {
    await this.settleKnown();
    if (session === null || this.#interrupting !== null) return;
    const steer = this.#waiting.shift();
    if (steer === undefined) return;
    if (steerLane(session) === "send_input") {
      let delivery: SteerReceipt;
      try {
        delivery = await session.send(steer.text);
      } catch (error) {
        if (error instanceof TurnOverError) {
          // Between turns: the prompt's next session takes it, or the
          // prompt's end refuses it.
          this.#waiting.unshift(steer);
          return;
        }
        await this.settle(steer, {
          delivered: false,
          reason: `the live session refused it: ${errorText(error)}`,
        });
        return;
      }
      this.#track(steer, delivery);
      await this.settleKnown();
      return;
    }
    if (!session.meta.session_id) {
      // Resuming without the thread's id would start a fresh session.
      await this.settle(steer, {
        delivered: false,
        reason:
          "the agent has not reported its session id yet, so the turn cannot be interrupted and resumed on the same session",
      });
      return;
    }
    this.#interrupting = steer;
    session.interrupt();
  }

  #track(steer: SteerCommand, delivery: SteerReceipt): void {
    const entry: InFlight = { steer, fate: null, known: Promise.resolve() };
    entry.known = delivery.acknowledged.then(
      (ack) => {
        entry.fate = {
          delivered: true,
          delivery: "send_input",
          mechanism: ack.mechanism,
          acknowledged_at: ack.at,
        };
      },
      (error) => {
        entry.fate = {
          delivered: false,
          reason: `the agent never acknowledged it: ${errorText(error)}`,
        };
      },
    ).finally(() => this.onKnown?.());
    this.#inFlight.push(entry);
  }

  /** Reports every in-flight steer whose fate is known, in arrival order. */
  async settleKnown(): Promise<void> {
    // Called at every boundary: nothing to wait for without a steer in flight.
    if (this.#inFlight.length === 0) return;
    // A delivery acknowledged already has its fate written one tick later.
    await Promise.resolve();
    while (this.#inFlight.length > 0) {
      const index = this.#inFlight.findIndex((entry) => entry.fate !== null);
      if (index < 0) return;
      const [entry] = this.#inFlight.splice(index, 1);
      await this.settle(entry!.steer, entry!.fate!);
    }
  }

  /**
   * Waits until every in-flight steer is acknowledged or refused (a session
   * settles them all by the end of its events), and reports them.
   */
  async drain(): Promise<void> {
    await Promise.all(this.#inFlight.map((entry) => entry.known));
    await this.settleKnown();
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
  async settle(steer: SteerCommand, fate: SteerFate): Promise<void> {
    const { attempt, provider } = this.#report.where(steer.prompt_id);
    await this.#report.settled({
      command: steer,
      ...fate,
      attempt,
      provider,
    });
    if (fate.delivered) {
      await this.#report.steered(steer, fate, attempt);
    }
  }

  /** Refuses every steer still waiting for a prompt (it finished). */
  async refuseWaiting(promptId: string, reason: string): Promise<void> {
    await this.drain();
    const waiting = this.#waiting.filter((s) => s.prompt_id === promptId);
    this.#waiting = this.#waiting.filter((s) => s.prompt_id !== promptId);
    for (const steer of waiting) {
      await this.settle(steer, { delivered: false, reason });
    }
  }
}
