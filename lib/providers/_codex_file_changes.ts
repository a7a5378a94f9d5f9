/**
 * A codex app-server `fileChange` item's changes, in the shape
 * `tool_input.changes` holds them.
 *
 * @module
 */

import { type Fields, record, text } from "./_fields.ts";
import { isRecord } from "../shared/is_record.ts";

/**
 * A `fileChange`'s changes as `tool_input.changes` holds them.
 *
 * @example Usage
 * ```ts
 * import { fileChanges } from "./_codex_file_changes.ts";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(
 *   fileChanges([{ path: "a.ts", kind: { type: "add" }, diff: "+x" }]),
 *   [{ path: "a.ts", kind: "add", diff: "+x" }],
 * );
 * ```
 */
export function fileChanges(value: unknown): Fields[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((change) => {
    const kind = record(change.kind);
    const movedTo = kind ? text(kind.move_path) : null;
    return {
      path: text(change.path) ?? "",
      kind: (kind ? text(kind.type) : text(change.kind)) ?? "update",
      diff: text(change.diff) ?? "",
      ...(movedTo ? { move_path: movedTo } : {}),
    };
  });
}
