/**
 * The text of a steer's `session/prompt` on the ACP lane when the agent
 * cannot take a steer into its running turn.
 *
 * @module
 */

import type { AcpProgress } from "./_acp_updates.ts";
import { CARRY_ON } from "../shared/carry_on.ts";

/** The most tool calls a restated task lists (the latest ones). */
const RESTATED_TOOLS = 30;

/** The longest last message a restated task quotes. */
const RESTATED_MESSAGE_CHARS = 600;

function relative(path: string, cwd: string): string {
  const root = cwd.endsWith("/") ? cwd : `${cwd}/`;
  return path.startsWith(root) ? path.slice(root.length) : path;
}

/**
 * The text of a steer's `session/prompt`: the task restated, what the
 * session saw done so far, the earlier steers still in force, the new
 * steer, and {@linkcode CARRY_ON}. An agent that dropped the cancelled
 * prompt from its history (gemini) learns the task again from it; one that
 * kept it (claude-code-acp) reads it as a reminder.
 *
 * @param task The attempt's prompt text.
 * @param progress What the session saw done (`AcpUpdates.progress()`).
 * @param steers Every steer so far, the newest last.
 * @param options `cwd`: paths under it are shown relative to it.
 *
 * @example Usage
 * ```ts
 * import { acpSteerPrompt } from "./_acp_steer_prompt.ts";
 * import assert from "node:assert/strict";
 *
 * const text = acpSteerPrompt("Write a.txt.", {
 *   tools: [{ kind: "edit", title: "Writing to a.txt", paths: ["/w/a.txt"], status: "completed" }],
 *   last_message: "Writing a.",
 * }, ["Also write b.txt."], { cwd: "/w" });
 * assert.match(text, /Write a\.txt\./);
 * assert.match(text, /edit a\.txt/);
 * assert.match(text, /Also write b\.txt\./);
 * ```
 */
export function acpSteerPrompt(
  task: string,
  progress: AcpProgress,
  steers: readonly string[],
  options: { cwd: string },
): string {
  const lines = [
    "You were working on the task below when the operator stopped your " +
    "last turn to correct it. What that turn already did to the files is " +
    "still there.",
    "",
    "<task>",
    task.trim(),
    "</task>",
    "",
  ];
  const tools = progress.tools.slice(-RESTATED_TOOLS);
  if (tools.length > 0 || progress.last_message) {
    lines.push("What was done so far:");
    if (progress.tools.length > tools.length) {
      lines.push(
        `- (${progress.tools.length - tools.length} earlier tool calls)`,
      );
    }
    for (const tool of tools) {
      const paths = tool.paths.map((path) => relative(path, options.cwd));
      const what = [tool.kind, ...paths].join(" ");
      const title = tool.title && !paths.some((p) => tool.title === p)
        ? `: ${tool.title.replace(/\s+/g, " ").slice(0, 200)}`
        : "";
      lines.push(`- ${what}${title} (${tool.status})`);
    }
    if (progress.last_message) {
      const message = progress.last_message.trim().replace(/\s+/g, " ");
      lines.push(
        `- Your last message: "${
          message.length > RESTATED_MESSAGE_CHARS
            ? `${message.slice(0, RESTATED_MESSAGE_CHARS)}…`
            : message
        }"`,
      );
    }
    lines.push("");
  }
  const earlier = steers.slice(0, -1);
  if (earlier.length > 0) {
    lines.push("Earlier steers from the operator, still in force:");
    for (const steer of earlier) lines.push(`- ${steer.trim()}`);
    lines.push("");
  }
  lines.push("The operator's steer:", (steers.at(-1) ?? "").trim());
  return lines.join("\n") + CARRY_ON;
}
