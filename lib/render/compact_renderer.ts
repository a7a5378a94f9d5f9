/**
 * The compact renderer: one dense line per event. Streamed text runs on one
 * line; tool finish lines name their tool; multi-line outputs are flattened
 * onto the line; a `--- N events, M tools ---` footer closes the run.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import { BaseRenderer } from "./_base_renderer.ts";
import type { RenderHandover } from "./renderer.ts";
import { cut, field, flatten, size, splitLines } from "./_format.ts";
import { runnerLine } from "./_runner_lines.ts";
import { paint, type Style } from "./ansi.ts";
import { diffStat } from "./diff.ts";
import { toolKind } from "./tool_summary.ts";

const TONE: Record<string, Style> = {
  good: "green",
  bad: "red",
  warn: "yellow",
  info: "cyan",
};

function shortModel(model: unknown): string {
  if (typeof model !== "string" || model === "") return "";
  const bare = model.replace(/^(claude-|anthropic\.)/, "");
  return bare.split("-").slice(0, 3).join("-");
}

/** The few words that tell one call of a tool from another. */
function toolTarget(
  name: string,
  input: Record<string, unknown> | undefined,
): string {
  switch (toolKind(name)) {
    case "bash":
      return cut(flatten(String(input?.command ?? "")), 60);
    case "grep": {
      const pattern = field(input, "pattern", "query");
      const where = field(input, "path");
      return pattern
        ? `"${cut(pattern, 40)}"${where ? ` in ${where}` : ""}`
        : "";
    }
    case "glob":
      return field(input, "pattern", "glob") ?? "";
    case "file_change":
      return Array.isArray(input?.changes)
        ? input.changes.map((c) =>
          field(c as Record<string, unknown>, "path") ?? "?"
        )
          .join(",")
        : field(input, "file_path", "path") ?? "";
    case "other":
      return "";
    default:
      return field(input, "file_path", "path", "file", "TargetFile") ?? "";
  }
}

function stopReason(reason: unknown): string {
  if (reason === "end_turn") return "end";
  if (reason === "tool_use") return "tool";
  return typeof reason === "string" && reason ? reason.toLowerCase() : "";
}

/** Renders events as dense single lines. */
export class CompactRenderer extends BaseRenderer {
  readonly mode = "compact" as const;

  /** Creates a compact renderer for a view, after a replaced one's handover. */
  constructor(view: ViewSettings, handover?: RenderHandover) {
    super(view, handover);
  }

  #line(text: string): string {
    return this.closeRun() + text + "\n";
  }

  #output(output: string): string {
    if (output === "") return "";
    switch (this.view.tool_output) {
      case "none":
        return "";
      case "summary":
        return paint(` (${size(output)})`, "dim");
      case "preview": {
        const lines = splitLines(output).filter((l) => l.trim() !== "");
        const more = lines.length > 1 ? ` [+${lines.length - 1} lines]` : "";
        return ` tr: ${cut(flatten(lines[0] ?? ""), 120)}${paint(more, "dim")}`;
      }
      case "full":
        return ` tr: ${cut(flatten(output), 2000)}`;
    }
  }

  protected renderEvent(event: RunEvent): string {
    const d = event.data;
    const runner = runnerLine(event);
    if (runner !== null) {
      return this.#line(
        paint(`${runner.icon} ${runner.text}`, TONE[runner.tone]!),
      );
    }
    switch (event.type) {
      case "message_streamed": {
        const kind = d.kind === "thinking" ? "thinking" : "text";
        const delta = String(d.delta ?? d.content ?? "").replace(/\n+/g, " ");
        if (this.run === kind) {
          return kind === "thinking" ? paint(delta, "dim") : delta;
        }
        const prefix = this.closeRun();
        this.run = kind;
        return prefix +
          (kind === "thinking" ? paint(`~ ${delta}`, "dim") : `>> ${delta}`);
      }
      case "message_received": {
        // Text already streamed is not printed twice.
        if (this.streamed) return this.closeRun();
        return this.#line(`msg ${cut(flatten(String(d.content ?? "")), 120)}`);
      }
      case "run_started":
        return this.#line(
          `r+ ${shortModel(d.model)}${
            d.provider_session_id
              ? paint(` ${d.provider_session_id}`, "dim")
              : ""
          }`,
        );
      case "tool_call_started": {
        const name = String(d.tool_name ?? "unknown");
        const target = toolTarget(
          name,
          this.started.get(String(d.tool_call_id ?? ""))?.input,
        );
        return this.#line(`t+${name}${target ? ` ${target}` : ""}`);
      }
      case "tool_call_completed":
      case "tool_call_failed": {
        const result = this.toolResult(event);
        const stat = this.view.diff === "none" ? "" : diffStat(result.change);
        const head = result.failed
          ? paint(`! t-${result.name} failed`, "red")
          : `t-${result.name}`;
        return this.#line(`${head}${stat}${this.#output(result.output)}`);
      }
      case "token_usage_updated":
        return this.#line(`tk:${d.input_tokens ?? 0}/${d.output_tokens ?? 0}`);
      case "run_completed": {
        const reason = stopReason(d.stop_reason);
        return this.#line(`r-${reason ? `:${reason}` : ""}`);
      }
      case "error_occurred":
        return this.#line(
          paint(
            `! ${d.error_code ? `${d.error_code}: ` : ""}${
              cut(flatten(String(d.error_message ?? "unknown error")), 120)
            }`,
            "red",
          ),
        );
      case "run_failed":
        return this.#line(paint("r-:failed", "red"));
      default:
        return this.#line(paint(`?${event.type}`, "dim"));
    }
  }

  override finish(): string {
    return this.closeRun() + paint(this.footer(), "dim") + "\n";
  }
}
