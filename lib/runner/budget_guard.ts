/**
 * Spending limits, enforced live: the run's `budget:` over everything the
 * run has spent (an earlier process of the same run id included), a
 * prompt's own keys over what that prompt has spent. A limit passed stops
 * the attempt as `budget_exhausted`.
 *
 * @module
 */

import type { Budget, BudgetKey } from "../packet/budget.ts";
import type { BudgetSpending } from "../shared/snapshot_schema.ts";
import type { AttemptUsage, StateFile } from "../status/state_file.ts";

/** What has been spent, summed. */
export interface Spent {
  /** Input tokens. */
  input_tokens: number;
  /** Output tokens. */
  output_tokens: number;
  /** US dollars (0 when no agent reported a cost). */
  cost_usd: number;
}

/** A limit that was passed. */
export interface BudgetPassed {
  /** Whose limit: the run's (`budget:` in the manifest) or the prompt's. */
  scope: "run" | "prompt";
  /** Which limit. */
  key: BudgetKey;
  /** The limit. */
  limit: number;
  /** What was spent against it. */
  spent: number;
  /** The limit and the spend in words. */
  detail: string;
}

/** One limit in force on an attempt, and what was spent before it. */
interface Bound {
  scope: "run" | "prompt";
  key: BudgetKey;
  limit: number;
  before: number;
}

const SPENT_OF: Record<BudgetKey, keyof Spent> = {
  max_cost_usd: "cost_usd",
  max_input_tokens: "input_tokens",
  max_output_tokens: "output_tokens",
};

/** What a run's attempts recorded spending, in all or for one prompt. */
export function spentInRun(
  state: StateFile,
  runId: string,
  promptId: string | null = null,
): Spent {
  const spent: Spent = { input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  for (const [id, prompt] of Object.entries(state.prompts)) {
    if (promptId !== null && id !== promptId) continue;
    for (const attempt of prompt.attempts) {
      if (attempt.run_id !== runId || !attempt.usage) continue;
      add(spent, attempt.usage);
    }
  }
  return spent;
}

function add(spent: Spent, usage: AttemptUsage): void {
  spent.input_tokens += usage.input_tokens;
  spent.output_tokens += usage.output_tokens;
  spent.cost_usd += usage.cost_usd ?? 0;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

function money(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

/** The limits in force on one attempt, and the test of its usage. */
export class BudgetGuard {
  readonly #bounds: Bound[];

  /**
   * @param run The run's limits.
   * @param prompt The prompt's own limits (each replaces the run's key).
   * @param before What was spent before this attempt: by the run, by the prompt.
   */
  constructor(
    run: Budget | null,
    prompt: Budget | null,
    before: { run: Spent; prompt: Spent },
  ) {
    const bounds: Bound[] = [];
    for (const key of Object.keys(SPENT_OF) as BudgetKey[]) {
      const own = prompt?.[key];
      if (own !== undefined) {
        bounds.push({
          scope: "prompt",
          key,
          limit: own,
          before: before.prompt[SPENT_OF[key]],
        });
        continue;
      }
      const limit = run?.[key];
      if (limit !== undefined) {
        bounds.push({
          scope: "run",
          key,
          limit,
          before: before.run[SPENT_OF[key]],
        });
      }
    }
    this.#bounds = bounds;
  }

  /** Whether any limit is in force. */
  get bounded(): boolean {
    return this.#bounds.length > 0;
  }

  /**
   * The first limit the attempt's usage so far has passed (reached, for a
   * limit already spent before the attempt), or `null`.
   */
  passed(usage: AttemptUsage | null): BudgetPassed | null {
    for (const bound of this.#bounds) {
      const now = usage === null ? 0 : usage[SPENT_OF[bound.key]] ?? 0;
      const spent = bound.before + now;
      const over = usage === null ? spent >= bound.limit : spent > bound.limit;
      if (!over) continue;
      const cost = bound.key === "max_cost_usd";
      const show = (n: number): string =>
        cost ? money(n) : `${Math.round(n)} tokens`;
      const whose = bound.scope === "run" ? "the run's" : "the prompt's";
      return {
        scope: bound.scope,
        key: bound.key,
        limit: bound.limit,
        spent,
        detail: `${whose} budget.${bound.key} of ${
          show(bound.limit)
        } is spent: ${show(spent)}${
          bound.scope === "run" ? " in this run" : " on this prompt"
        }`,
      };
    }
    return null;
  }

  /** Each limit in force and what is spent against it, for the snapshot. */
  spending(usage: AttemptUsage | null): BudgetSpending[] {
    return this.#bounds.map((bound) => ({
      key: bound.key,
      scope: bound.scope,
      limit: bound.limit,
      spent: round(
        bound.before + (usage === null ? 0 : usage[SPENT_OF[bound.key]] ?? 0),
      ),
    }));
  }

  /** What is left of the money limit in force, or `null` when there is none. */
  remainingCostUsd(): number | null {
    const bound = this.#bounds.find((b) => b.key === "max_cost_usd");
    if (bound === undefined) return null;
    return Math.max(0, bound.limit - bound.before);
  }
}
