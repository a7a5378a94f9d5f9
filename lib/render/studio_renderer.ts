/**
 * The studio renderer: indented, icon-led output for people. One wording per
 * tool kind, the assistant's message shown once whether it streamed or came
 * whole, thinking dimmed (or hidden), tool output and diffs at the view's
 * level. Diffs come from the tool call's own patch; a path-only change shows
 * the file's current `git diff`, labelled as such.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import { BaseRenderer } from "./_base_renderer.ts";
import type { RenderHandover } from "./renderer.ts";
import { splitLines, truncatedMarker } from "./_format.ts";
import { runnerLine } from "./_runner_lines.ts";
import { paint, type Style } from "./ansi.ts";
import type { RenderContext } from "./worktree_diff.ts";
import { BODY_LIMIT, diffStat, parseGitDiff, renderDiffBody } from "./diff.ts";
import { toolResultText, toolStartText } from "./tool_summary.ts";

const INDENT = "  ";
const BODY = "    ";
const PREVIEW_LINES = 3;
const TONE: Record<string, Style> = {
  good: "green",
  bad: "red",
  warn: "yellow",
  info: "cyan",
};

/** Renders events as indented, icon-led lines for people. */
export class StudioRenderer extends BaseRenderer {
  readonly mode = "studio" as const;
  #tokens = { input: 0, output: 0 };
  #sessionTools = 0;

  /** Creates a studio renderer for a view, after a replaced one's handover. */
  constructor(view: ViewSettings, handover?: RenderHandover) {
    super(view, handover);
  }

  /** Starts or continues a block of streamed text, indenting every line. */
  #stream(kind: "text" | "thinking", text: string): string {
    let out = "";
    if (this.run !== kind) {
      out += this.closeRun() + (kind === "text" ? "\n" : "") + INDENT +
        (kind === "thinking" ? paint("~ ", "dim") : "");
      this.run = kind;
    }
    const body = text.replace(
      /\n/g,
      "\n" + INDENT + (kind === "thinking" ? "  " : ""),
    );
    return out + (kind === "thinking" ? paint(body, "dim") : body);
  }

  #line(text: string): string {
    return this.closeRun() + INDENT + text + "\n";
  }

  #outputLines(output: string): string {
    const level = this.view.tool_output;
    if (level === "none" || level === "summary" || output === "") return "";
    const lines = splitLines(output).filter((line) => line.trim() !== "");
    const limit = level === "preview" ? PREVIEW_LINES : BODY_LIMIT;
    const mark = level === "preview" ? "│" : "┊";
    const shown = lines.slice(0, limit).map((line) =>
      `${BODY}${paint(mark, "dim")} ${
        level === "preview" ? line.trim() : line
      }\n`
    );
    if (lines.length > limit) {
      shown.push(
        paint(`${BODY}${truncatedMarker(lines.length - limit)}`, "dim") + "\n",
      );
    }
    return shown.join("");
  }

  #worktreeState(paths: string[], context: RenderContext): string {
    let out = "";
    for (const path of paths) {
      const diff = context.worktree_diffs?.[path];
      if (diff === undefined || diff === null) {
        out += paint(`${BODY}(current state of ${path} unavailable)`, "dim") +
          "\n";
        continue;
      }
      out += paint(
        `${BODY}(current state of ${path}, not this call's change)`,
        "dim",
      ) +
        "\n";
      const lines = parseGitDiff(diff);
      out += lines.length
        ? renderDiffBody(lines, BODY)
        : paint(`${BODY}(no uncommitted change)`, "dim") + "\n";
    }
    return out;
  }

  protected renderEvent(event: RunEvent, context: RenderContext): string {
    const afterError = this.previous === "error_occurred";
    const d = event.data;
    const runner = runnerLine(event, false);
    if (runner !== null) {
      if (event.type === "prompt_started") {
        return this.closeRun() + "\n" +
          paint(`${runner.icon} ${runner.text}`, "bold") + "\n";
      }
      if (event.type === "run_finished") {
        return this.closeRun() + "\n" +
          paint(`${runner.icon} ${runner.text}`, TONE[runner.tone]!) + "\n";
      }
      let text = this.#line(
        paint(`${runner.icon} ${runner.text}`, TONE[runner.tone]!),
      );
      if (event.type === "verification_finished" && !d.passed) {
        const items = Array.isArray(event.data.items) ? event.data.items : [];
        for (
          const item of items.filter((i) => i.status !== "pass").slice(0, 10)
        ) {
          const icon = item.status === "fault" ? "!" : "✗";
          text += `${BODY}${paint(icon, "red")} ${item.clause} ${item.label} ${
            paint(`— ${splitLines(item.reason)[0] ?? ""}`, "dim")
          }\n`;
        }
      }
      return text;
    }
    switch (event.type) {
      case "run_started": {
        this.#tokens = { input: 0, output: 0 };
        this.#sessionTools = 0;
        const model = typeof d.model === "string" && d.model
          ? `${d.model} `
          : "";
        return this.closeRun() + "\n" +
          `${INDENT}${paint("●", "blue")} ${model}session started\n`;
      }
      case "message_streamed": {
        if (d.kind === "thinking") {
          return this.#stream("thinking", String(d.delta ?? ""));
        }
        return this.#stream("text", String(d.delta ?? d.content ?? ""));
      }
      case "message_received": {
        // Shown once: streamed text is not repeated; whole messages are shown.
        if (this.streamed) return this.closeRun();
        return this.closeRun() + this.#stream("text", String(d.content ?? "")) +
          this.closeRun();
      }
      case "tool_call_started": {
        this.#sessionTools++;
        const started = this.started.get(String(d.tool_call_id ?? ""));
        return this.#line(
          `${paint("◐", "cyan")} ${
            toolStartText(started?.name ?? String(d.tool_name), started?.input)
          }`,
        );
      }
      case "tool_call_completed":
      case "tool_call_failed": {
        const result = this.toolResult(event);
        const icon = result.failed ? paint("✗", "red") : paint("✓", "green");
        const details = this.view.tool_output !== "none";
        const stat = this.view.diff === "none" ? "" : diffStat(result.change);
        let out = this.#line(
          `${icon} ${toolResultText(result, details)}${stat}`,
        );
        out += this.#outputLines(result.output);
        if (this.view.diff === "full" && result.change && !result.failed) {
          out += result.change.kind === "patch"
            ? renderDiffBody(result.change.lines, BODY)
            : this.#worktreeState(result.change.paths, context);
        }
        return out;
      }
      case "token_usage_updated":
        this.#tokens = {
          input: Number(d.input_tokens) || 0,
          output: Number(d.output_tokens) || 0,
        };
        return "";
      case "run_completed":
        return this.closeRun() + "\n" +
          `${INDENT}${paint("●", "blue")} Session complete (${
            d.stop_reason ?? "unknown"
          }) — ${this.#tokens.input}/${this.#tokens.output} tokens, ${this.#sessionTools} tool${
            this.#sessionTools === 1 ? "" : "s"
          }\n`;
      case "error_occurred":
        return this.#line(
          paint(
            `✗ ${d.error_code ? `${d.error_code}: ` : ""}${
              d.error_message ?? "unknown error"
            }`,
            "red",
          ),
        );
      case "run_failed":
        // The error was just shown: one failure, one line.
        return afterError ? "" : this.#line(paint(
          `✗ Session failed${d.error_message ? `: ${d.error_message}` : ""}`,
          "red",
        ));
      default:
        return this.#line(paint(`? ${event.type}`, "dim"));
    }
  }
}
