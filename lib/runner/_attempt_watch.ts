/**
 * What the runner watches while an attempt's session streams: its spend
 * against the budget (a limit passed stops the attempt), a refused
 * permission, and a stall (no event from the agent for the progress
 * timeout). Each raises `attention_needed`.
 *
 * @module
 */

import type { ProviderEvent } from "../shared/events.ts";
import type { UsageTally } from "../status/usage_tally.ts";
import type { RunContext } from "./_run_context.ts";
import type { BudgetGuard, BudgetPassed } from "./budget_guard.ts";

/** How often a running attempt's spend is saved to `state.json`, at most. */
const USAGE_SAVE_MS = 1_000;

/** The watch over one attempt. */
export class AttemptWatch {
  readonly #ctx: RunContext;
  readonly #promptId: string;
  readonly #attempt: number;
  readonly #progressMs: number | null;
  readonly #guard: BudgetGuard;
  readonly #tally: UsageTally;
  #lastEvent = performance.now();
  #stalled = false;
  #savedAt = 0;

  constructor(
    ctx: RunContext,
    slot: {
      promptId: string;
      attempt: number;
      progressMs: number | null;
      guard: BudgetGuard;
      tally: UsageTally;
    },
  ) {
    this.#ctx = ctx;
    this.#promptId = slot.promptId;
    this.#attempt = slot.attempt;
    this.#progressMs = slot.progressMs;
    this.#guard = slot.guard;
    this.#tally = slot.tally;
  }

  /** The limits in force, shown before the first event. */
  start(): void {
    this.#ctx.hooks.budgetChanged?.(
      this.#guard.bounded ? this.#guard.spending(null) : null,
    );
  }

  /**
   * An event from the agent, already emitted: its usage is checked against
   * the budget (the limit it passed, if it did), a refused call raises
   * attention.
   */
  async event(event: ProviderEvent): Promise<BudgetPassed | null> {
    this.#lastEvent = performance.now();
    this.#stalled = false;
    if (event.type === "tool_call_failed") {
      if (event.data.error_code === "approval_denied") {
        await this.denied(
          `the agent was refused ${event.data.tool_name}: ${
            event.data.tool_output.slice(0, 300)
          }`,
        );
      }
      return null;
    }
    if (event.type !== "token_usage_updated") return null;
    const usage = this.#tally.usage;
    const record = this.#ctx.attempt?.record;
    if (record) {
      // A runner killed mid-attempt leaves what it spent for the resume.
      record.usage = usage;
      if (performance.now() - this.#savedAt >= USAGE_SAVE_MS) {
        this.#savedAt = performance.now();
        await this.#ctx.saveState();
      }
    }
    if (!this.#guard.bounded) return null;
    this.#ctx.hooks.budgetChanged?.(this.#guard.spending(usage));
    return this.#guard.passed(usage);
  }

  /** A permission was refused: a person has to widen it. */
  async denied(detail: string): Promise<void> {
    await this.#ctx.attention(
      "approval_denied",
      this.#promptId,
      this.#attempt,
      detail,
    );
  }

  /** The agent is quiet (an idle tick): a stall is raised once. */
  async idle(): Promise<void> {
    const limit = this.#progressMs;
    if (limit === null || this.#stalled) return;
    const quiet = performance.now() - this.#lastEvent;
    if (quiet < limit) return;
    this.#stalled = true;
    await this.#ctx.attention(
      "stalled",
      this.#promptId,
      this.#attempt,
      `no event from the agent for ${
        Math.round(quiet / 1000)
      } s (progress timeout ${limit / 1000} s)`,
      true,
    );
  }
}
