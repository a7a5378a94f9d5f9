/**
 * Notifications: `notify:` rules (in a packet's manifest or a
 * `workspace.yml`) that run a command or POST to a webhook when a run needs
 * attention or ends. The control plane delivers them, off the run's hot
 * path, and logs each outcome as a `notified` entry of `log.jsonl`.
 *
 * @module
 */

export {
  DEFAULT_NOTIFY_LIMITS,
  Notifier,
  type NotifierOptions,
  type NotifyLimits,
  type NotifyRecord,
  type NotifyRun,
} from "./notifier.ts";
export {
  MAX_NOTIFY_TIMEOUT_MS,
  NOTIFY_RULE_KEYS,
  type NotifyParseOptions,
  parseNotifyRules,
} from "./notify_rules.ts";
export { notifyMoments, ruleMoment } from "./notify_moments.ts";
export { maskWebhookUrl, notifyTarget, notifyVia } from "./notify_target.ts";
export { NOTIFY_VARIABLES } from "./_notify_env.ts";
export {
  NOTIFY_ON,
  type NotifyCommandRule,
  type NotifyOn,
  type NotifyRule,
  type NotifyRuleBase,
  type NotifyWebhookRule,
} from "../shared/notify_rule.ts";
