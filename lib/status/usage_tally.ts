/**
 * What an attempt's agent reported using, summed over its sessions: the
 * runner tallies each attempt with it, and a reader that has only the
 * run's events (a fleet's) replays them with it to the same totals.
 *
 * @module
 */

import type { ProviderEvent } from "../shared/events.ts";
import type { AttemptUsage } from "./state_file.ts";

/**
 * Sums what each session of an attempt reported: a session's
 * `token_usage_updated` carries its running totals, and a resumed session
 * starts counting again.
 */
export class UsageTally {
  #done = { input: 0, output: 0, cost: 0 };
  #session = { input: 0, output: 0, cost: 0 };
  #costSeen = false;

  /** Folds one event in. */
  observe(event: ProviderEvent): void {
    if (event.type === "run_started") {
      this.#done = {
        input: this.#done.input + this.#session.input,
        output: this.#done.output + this.#session.output,
        cost: this.#done.cost + this.#session.cost,
      };
      this.#session = { input: 0, output: 0, cost: 0 };
      return;
    }
    if (event.type !== "token_usage_updated") return;
    const read = (value: unknown): number | null => {
      const n = Number(value);
      return value !== null && value !== undefined && Number.isFinite(n) &&
          n >= 0
        ? n
        : null;
    };
    const { input_tokens, output_tokens, cost_usd } = event.data;
    this.#session.input = read(input_tokens) ?? this.#session.input;
    this.#session.output = read(output_tokens) ?? this.#session.output;
    const cost = read(cost_usd);
    if (cost !== null) {
      this.#session.cost = cost;
      this.#costSeen = true;
    }
  }

  /** The totals so far. */
  get usage(): AttemptUsage {
    return {
      input_tokens: this.#done.input + this.#session.input,
      output_tokens: this.#done.output + this.#session.output,
      cost_usd: this.#costSeen
        ? Math.round((this.#done.cost + this.#session.cost) * 1e6) / 1e6
        : null,
    };
  }
}
