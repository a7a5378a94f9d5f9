/**
 * Reading a `notify:` value (a packet's manifest, a `workspace.yml`): a
 * list of `{on: [names…], command: [argv…]}` and `{on: [names…], webhook:
 * URL}` rules, checked strictly. The caller says how a bad value is
 * reported, so each file's errors keep that file's form.
 *
 * @module
 */

import { isAbsolute, resolve } from "../shared/posix_path.ts";
import { isRecord } from "../shared/is_record.ts";
import {
  NOTIFY_ON,
  type NotifyOn,
  type NotifyRule,
} from "../shared/notify_rule.ts";

/** The keys of one `notify:` rule. */
export const NOTIFY_RULE_KEYS = [
  "on",
  "command",
  "webhook",
  "timeout_ms",
] as const;

/** The longest `timeout_ms` a rule may give: ten minutes. */
export const MAX_NOTIFY_TIMEOUT_MS = 600_000;

/** Options for {@linkcode parseNotifyRules}. */
export interface NotifyParseOptions {
  /**
   * The directory of the file the rules are in: commands run there, and a
   * relative program path (`./notify.sh`) is resolved against it.
   */
  dir: string;
  /**
   * Reports a bad value and throws: `key` is its dotted path
   * (`notify[0].on`), `detail` what is wrong with it.
   */
  fail(key: string, detail: string): never;
  /**
   * Refuses keys of a rule (`block`, at dotted path `at`) that are not
   * `known`; without it an unknown key is reported through `fail`.
   */
  refuseUnknownKeys?(
    block: Record<string, unknown>,
    known: readonly string[],
    at: string,
  ): void;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function parseOn(
  value: unknown,
  at: string,
  fail: NotifyParseOptions["fail"],
): NotifyOn[] {
  const names = Array.isArray(value) ? value : [value];
  const allowed = NOTIFY_ON.join(", ");
  if (value === undefined || value === null || names.length === 0) {
    fail(
      `${at}.on`,
      `a rule needs the moments it is for (allowed: ${allowed})`,
    );
  }
  const on: NotifyOn[] = [];
  for (const name of names) {
    if (!(NOTIFY_ON as readonly unknown[]).includes(name)) {
      fail(`${at}.on`, `unknown name ${shown(name)} (allowed: ${allowed})`);
    }
    if (!on.includes(name as NotifyOn)) on.push(name as NotifyOn);
  }
  return on;
}

function parseCommand(
  value: unknown,
  at: string,
  options: NotifyParseOptions,
): string[] {
  const key = `${at}.command`;
  if (typeof value === "string") {
    options.fail(
      key,
      `expected an argv list [program, args…], found a string; a shell command is [sh, -c, ${
        shown(value)
      }]`,
    );
  }
  if (!Array.isArray(value) || value.length === 0) {
    options.fail(key, "expected an argv list [program, args…], not empty");
  }
  const argv = value as unknown[];
  argv.forEach((arg, index) => {
    if (typeof arg !== "string" || arg.includes("\0")) {
      options.fail(
        `${key}[${index}]`,
        `expected a string, found ${shown(arg)} (quote numbers)`,
      );
    }
  });
  const [program, ...args] = argv as string[];
  if (program!.trim() === "") options.fail(`${key}[0]`, "the program is empty");
  // A relative path means the declaring file's directory, wherever the
  // runner was started; a bare name is looked up on PATH.
  const exec = program!.includes("/") && !isAbsolute(program!)
    ? resolve(options.dir, program!)
    : program!;
  return [exec, ...args];
}

function parseWebhook(
  value: unknown,
  at: string,
  fail: NotifyParseOptions["fail"],
): string {
  const key = `${at}.webhook`;
  if (typeof value !== "string" || value.trim() === "") {
    fail(key, "expected an http:// or https:// URL");
  }
  let url: URL;
  try {
    url = new URL((value as string).trim());
  } catch {
    fail(key, "expected an http:// or https:// URL, found no URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    // The scheme only: the rest of the URL may hold a secret.
    fail(
      key,
      `expected an http:// or https:// URL, found a ${
        JSON.stringify(url.protocol.slice(0, -1))
      } URL`,
    );
  }
  return url.href;
}

function parseTimeout(
  value: unknown,
  at: string,
  fail: NotifyParseOptions["fail"],
): number | null {
  if (value === undefined || value === null) return null;
  if (
    typeof value !== "number" || !Number.isInteger(value) || value <= 0 ||
    value > MAX_NOTIFY_TIMEOUT_MS
  ) {
    fail(
      `${at}.timeout_ms`,
      `expected a whole number of milliseconds from 1 to ${MAX_NOTIFY_TIMEOUT_MS}, found ${
        shown(value)
      }`,
    );
  }
  return value as number;
}

function parseRule(
  item: unknown,
  at: string,
  options: NotifyParseOptions,
): NotifyRule {
  const fail: NotifyParseOptions["fail"] = options.fail.bind(options);
  if (!isRecord(item)) {
    fail(
      at,
      `expected a mapping {on: [names], command: [argv]} or {on: [names], webhook: URL}, found ${
        shown(item)
      }`,
    );
  }
  if (options.refuseUnknownKeys) {
    options.refuseUnknownKeys(item, NOTIFY_RULE_KEYS, at);
  } else {
    for (const key of Object.keys(item)) {
      if (!(NOTIFY_RULE_KEYS as readonly string[]).includes(key)) {
        fail(
          `${at}.${key}`,
          `unknown key (known keys of ${at}: ${NOTIFY_RULE_KEYS.join(", ")})`,
        );
      }
    }
  }
  const on = parseOn(item.on, at, fail);
  const timeout_ms = parseTimeout(item.timeout_ms, at, fail);
  const hasCommand = item.command !== undefined && item.command !== null;
  const hasWebhook = item.webhook !== undefined && item.webhook !== null;
  if (hasCommand && hasWebhook) {
    fail(at, "give a command or a webhook, not both (make two rules)");
  }
  if (hasCommand) {
    const command = parseCommand(item.command, at, options);
    return { on, command, timeout_ms, dir: options.dir };
  }
  if (hasWebhook) {
    const webhook = parseWebhook(item.webhook, at, fail);
    return { on, webhook, timeout_ms, dir: options.dir };
  }
  return fail(at, "a rule needs a command: [argv…] or a webhook: URL");
}

/**
 * Reads a `notify:` value: no rules when it is absent, else each rule
 * checked (known keys, `on` names from {@linkcode NOTIFY_ON}, a non-empty
 * argv or an http(s) URL, exactly one of them, a sane `timeout_ms`).
 *
 * @param value The value as parsed from YAML.
 * @param options Where the rules were declared and how errors are reported.
 * @returns The rules, in order.
 * @throws whatever `options.fail` throws, for the first bad value.
 *
 * @example Usage
 * ```ts
 * import { parseNotifyRules } from "./notify_rules.ts";
 * import assert from "node:assert/strict";
 *
 * const rules = parseNotifyRules(
 *   [{ on: ["failed"], webhook: "https://hooks.example/x" }],
 *   { dir: "/srv/packet", fail: (key, detail) => { throw new Error(`${key}: ${detail}`); } },
 * );
 * assert.deepEqual(rules[0]?.on, ["failed"]);
 * ```
 */
export function parseNotifyRules(
  value: unknown,
  options: NotifyParseOptions,
): NotifyRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    options.fail(
      "notify",
      "expected a list of rules, each {on: [names], command: [argv]} or {on: [names], webhook: URL}",
    );
  }
  return (value as unknown[]).map((item, index) =>
    parseRule(item, `notify[${index}]`, options)
  );
}
