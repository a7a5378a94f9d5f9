/**
 * How a notification target is named where others can read it (the audit
 * log, which a fleet publishes, and warnings): a command by its program, a
 * webhook by its URL without the parts that carry secrets.
 *
 * @module
 */

import type { NotifyRule } from "../shared/notify_rule.ts";

/**
 * Whether a URL path segment looks like a token (Slack's and Discord's
 * webhook URLs carry theirs in the path): long, or long-ish and mixing
 * letters and digits.
 */
function looksSecret(segment: string): boolean {
  if (segment.length >= 32) return true;
  return segment.length >= 16 && /[0-9]/.test(segment) &&
    /[A-Za-z]/.test(segment);
}

/**
 * A webhook URL as it may be shown: no user name or password, no query
 * (`?…` when there was one), no fragment, and path segments that look like
 * tokens replaced with `…`.
 *
 * @example Usage
 * ```ts
 * import { maskWebhookUrl } from "./notify_target.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   maskWebhookUrl("https://bot:pw@hooks.example/services/T01/B02/Xk3vL9qQ2mN8pR4sT6uW?token=abc"),
 *   "https://hooks.example/services/T01/B02/…?…",
 * );
 * ```
 */
export function maskWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(not a URL)";
  }
  const path = parsed.pathname.split("/")
    .map((segment) => looksSecret(segment) ? "…" : segment)
    .join("/");
  return `${parsed.protocol}//${parsed.host}${path}${
    parsed.search === "" ? "" : "?…"
  }`;
}

/** A rule's target as the log names it: the program, or the masked URL. */
export function notifyTarget(rule: NotifyRule): string {
  return "command" in rule ? rule.command[0]! : maskWebhookUrl(rule.webhook);
}

/** A rule's kind: `command` or `webhook`. */
export function notifyVia(rule: NotifyRule): "command" | "webhook" {
  return "command" in rule ? "command" : "webhook";
}
