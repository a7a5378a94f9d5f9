/**
 * The work tree's `git diff` of paths a tool call changed without carrying its
 * own patch. This is I/O, done by the runner before it renders, never by a
 * renderer.
 *
 * @module
 */

import { runProcess } from "../shared/run_process.ts";
import type { RunEvent } from "../shared/events.ts";
import { fileChangeOf } from "./diff.ts";
import { isRecord } from "../shared/is_record.ts";

/** What a renderer may be handed along with an event. */
export interface RenderContext {
  /**
   * The current `git diff` text of each path-only change, by path (`null`
   * when git could not tell).
   */
  worktree_diffs?: Record<string, string | null>;
}

/** The paths of a tool call's change that carries no patch of its own. */
export function pathOnlyChanges(
  event: RunEvent,
  tools: Map<string, { name: string; input: Record<string, unknown> }>,
): string[] {
  if (
    event.type !== "tool_call_completed" && event.type !== "tool_call_failed"
  ) {
    return [];
  }
  const id = String(event.data.tool_call_id ?? "");
  const known = tools.get(id);
  const name = String(event.data.tool_name ?? known?.name ?? "");
  const carried = event.data.tool_input;
  const input = isRecord(carried)
    ? { ...known?.input, ...carried }
    : known?.input;
  const change = fileChangeOf(name, input);
  return change?.kind === "paths" ? change.paths : [];
}

/**
 * Reads `git diff HEAD -- PATH` for each path in `cwd` (untracked files show
 * as all added).
 *
 * Requires `--allow-run` permission.
 */
export async function readWorktreeDiffs(
  paths: string[],
  cwd: string,
): Promise<Record<string, string | null>> {
  const diffs: Record<string, string | null> = {};
  for (const path of paths) {
    const tracked = await runProcess("git", {
      args: [
        "-C",
        cwd,
        "diff",
        "--no-color",
        "--no-ext-diff",
        "HEAD",
        "--",
        path,
      ],
      timeoutMs: 10_000,
    });
    if (tracked.state !== "exited" || tracked.code !== 0) {
      diffs[path] = null;
      continue;
    }
    if (tracked.stdout.trim() !== "") {
      diffs[path] = tracked.stdout;
      continue;
    }
    const status = await runProcess("git", {
      args: ["-C", cwd, "status", "--porcelain=v1", "--", path],
      timeoutMs: 10_000,
    });
    if (!status.stdout.startsWith("??")) {
      diffs[path] = ""; // Tracked and unchanged (or gone): no current change.
      continue;
    }
    // An untracked file: compare it with nothing.
    const untracked = await runProcess("git", {
      args: ["diff", "--no-color", "--no-index", "--", "/dev/null", path],
      cwd,
      timeoutMs: 10_000,
    });
    diffs[path] = untracked.state === "exited" && untracked.code === 1
      ? untracked.stdout
      : "";
  }
  return diffs;
}
