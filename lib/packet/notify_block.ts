/**
 * The manifest's `notify:` block, read with the packet's error form: an
 * unknown key is refused as every other (with the key it most likely
 * meant), and a bad value names the file and the key's dotted path.
 *
 * @module
 */

import type { NotifyRule } from "../shared/notify_rule.ts";
import { parseNotifyRules } from "../notify/notify_rules.ts";
import { invalid } from "./_fields.ts";
import { refuseUnknownKeys } from "./known_keys.ts";

/**
 * Reads a manifest's `notify:` value (none when absent).
 *
 * @param value The value as parsed from the front matter.
 * @param file The manifest, named in errors.
 * @param dir The packet directory: commands run there.
 * @throws {UsageError} (`INVALID_PACKET`) naming the file and the key.
 */
export function parseNotifyBlock(
  value: unknown,
  file: string,
  dir: string,
): NotifyRule[] {
  return parseNotifyRules(value, {
    dir,
    fail: (key, detail) => invalid(file, `key "${key}": ${detail}`),
    refuseUnknownKeys: (block, known, at) =>
      refuseUnknownKeys(block, known, file, { at }),
  });
}
