/**
 * The one owner of delivered-steer counts: how many steers each prompt of a
 * run id has received. The plane keeps one and restores it from the
 * interventions an earlier process recorded; a runner whose hooks keep none
 * gets one through {@linkcode withSteerLedger}.
 *
 * @module
 */

import type { RunHooks, SteerResult } from "../shared/run_hooks.ts";

/** Delivered steers per prompt, and accepted ones still waiting for their lane. */
export class SteerLedger {
  #counts = new Map<string, number>();
  #pending = new Map<string, number>();

  /** Record one accepted steer for `promptId`, waiting for its lane. */
  accept(promptId: string): void {
    this.#pending.set(promptId, this.pending(promptId) + 1);
  }

  /** One accepted steer for `promptId` was settled (delivered or refused). */
  settle(promptId: string): void {
    this.#pending.set(promptId, Math.max(0, this.pending(promptId) - 1));
  }

  /** Forget the steers waiting for `promptId` (another prompt starts). */
  dropPending(promptId: string): void {
    this.#pending.delete(promptId);
  }

  /** How many accepted steers for `promptId` wait for their lane. */
  pending(promptId: string): number {
    return this.#pending.get(promptId) ?? 0;
  }

  /** Record one delivered steer for `promptId`; returns the new count. */
  record(promptId: string): number {
    const next = this.count(promptId) + 1;
    this.#counts.set(promptId, next);
    return next;
  }

  /** Set a prompt's count (restored from an earlier process). */
  restore(promptId: string, count: number): void {
    this.#counts.set(promptId, count);
  }

  /** How many steers `promptId` has received. */
  count(promptId: string): number {
    return this.#counts.get(promptId) ?? 0;
  }
}

/**
 * Hooks that answer {@linkcode RunHooks.steerCount}: the hooks themselves
 * when they keep a ledger, otherwise the same hooks with a ledger fed by
 * their `steerSettled`.
 */
export function withSteerLedger(hooks: RunHooks): RunHooks {
  if (hooks.steerCount) return hooks;
  const ledger = new SteerLedger();
  return {
    ...hooks,
    steerSettled(result: SteerResult): Promise<void> {
      if (result.delivered) ledger.record(result.command.prompt_id);
      return hooks.steerSettled?.(result) ?? Promise.resolve();
    },
    steerCount: (promptId: string): number => ledger.count(promptId),
  };
}
