/**
 * A `notify:` rule (in a packet's manifest or a `workspace.yml`): which
 * moments of a run are worth telling someone about, and how to tell them.
 * The rules are parsed in `lib/notify/` and delivered by the control plane.
 *
 * @module
 */

/**
 * The moments a rule can name in `on:`: `attention` (every
 * `attention_needed`), `failed` (`run_finished` with status `failed` or
 * `blocked`), `completed` (`run_finished` with status `completed`) and
 * `finished` (every `run_finished`, interrupted included).
 */
export const NOTIFY_ON = [
  "attention",
  "failed",
  "completed",
  "finished",
] as const;

/** A moment a `notify:` rule can name. */
export type NotifyOn = typeof NOTIFY_ON[number];

/** What every `notify:` rule has. */
export interface NotifyRuleBase {
  /** The moments that trigger it. */
  on: NotifyOn[];
  /**
   * How long one delivery may take, in milliseconds (a webhook: each
   * try); `null`: the default (10 s for a command, 5 s for a webhook).
   */
  timeout_ms: number | null;
  /**
   * The directory of the file that declared it: a command runs there, and
   * a relative program path (`./notify.sh`) is resolved against it.
   */
  dir: string;
}

/** A rule that runs a program (argv, never a shell string). */
export interface NotifyCommandRule extends NotifyRuleBase {
  /** The program and its arguments. */
  command: string[];
}

/** A rule that POSTs the event as JSON to a URL (http or https). */
export interface NotifyWebhookRule extends NotifyRuleBase {
  /** The URL. */
  webhook: string;
}

/** A `notify:` rule: a command or a webhook. */
export type NotifyRule = NotifyCommandRule | NotifyWebhookRule;
