/**
 * The verbose renderer: one `[type] key=value` line per event, every value
 * on the line (JSON-quoted when it is not a plain word).
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import { BaseRenderer } from "./_base_renderer.ts";
import type { RenderHandover } from "./renderer.ts";
import { cut, kv, splitLines } from "./_format.ts";
import { firstProblem } from "./_runner_lines.ts";
import { paint, type Style } from "./ansi.ts";
import { diffStat } from "./diff.ts";

const VALUE_LIMIT = 200;
const OUTPUT_LIMIT = 2000;

function tagStyle(type: string): Style {
  if (/failed|error/.test(type)) return "red";
  if (type.startsWith("tool_")) return "green";
  if (type.startsWith("prompt_") || type.startsWith("run_")) return "blue";
  return "dim";
}

function shorten(value: unknown): unknown {
  if (typeof value === "string") return cut(value, VALUE_LIMIT);
  if (typeof value === "object" && value !== null) {
    const text = JSON.stringify(value);
    return text.length > VALUE_LIMIT ? cut(text, VALUE_LIMIT) : value;
  }
  return value;
}

/** Renders events as `[type] key=value` lines. */
export class VerboseRenderer extends BaseRenderer {
  readonly mode = "verbose" as const;

  /** Creates a verbose renderer for a view, after a replaced one's handover. */
  constructor(view: ViewSettings, handover?: RenderHandover) {
    super(view, handover);
  }

  #line(type: string, pairs: [string, unknown][]): string {
    const shown = pairs.filter(([, value]) =>
      value !== undefined && value !== null && value !== ""
    );
    return `${paint(`[${type}]`, tagStyle(type))}${
      shown.map(([key, value]) => ` ${kv(key, value)}`).join("")
    }\n`;
  }

  #output(output: string): [string, unknown][] {
    if (output === "") return [];
    switch (this.view.tool_output) {
      case "none":
        return [];
      case "summary":
        return [["output_chars", output.length]];
      case "preview": {
        const lines = splitLines(output).filter((l) => l.trim() !== "");
        const more = lines.length - 3;
        return [
          ["output", lines.slice(0, 3).join("\n")],
          ...(more > 0
            ? [["output_more_lines", more] as [string, unknown]]
            : []),
        ];
      }
      case "full":
        return [[
          "output",
          output.length > OUTPUT_LIMIT
            ? `${output.slice(0, OUTPUT_LIMIT)}[truncated: ${
              output.length - OUTPUT_LIMIT
            } more chars]`
            : output,
        ]];
    }
  }

  protected renderEvent(event: RunEvent): string {
    const d = event.data;
    const where: [string, unknown][] = event.prompt_id === null
      ? []
      : [["prompt", event.prompt_id], ["attempt", event.attempt]];
    switch (event.type) {
      case "tool_call_started":
        return this.#line(event.type, [
          ...where,
          ["name", d.tool_name],
          ["id", d.tool_call_id],
          ["input", shorten(d.tool_input)],
        ]);
      case "tool_call_completed":
      case "tool_call_failed": {
        const result = this.toolResult(event);
        const change = result.change;
        const pairs: [string, unknown][] = [
          ...where,
          ["name", result.name],
          ["id", d.tool_call_id],
          ["is_error", result.failed ? true : undefined],
        ];
        if (this.view.diff !== "none" && change) {
          pairs.push(
            change.kind === "patch"
              ? ["diff", diffStat(change).trim() || "+0 \u22120"]
              : ["changed", change.paths.join(",")],
          );
        }
        return this.#line(event.type, [
          ...pairs,
          ...this.#output(result.output),
        ]);
      }
      case "message_streamed":
        return this.#line(event.type, [...where, ["kind", d.kind ?? "text"], [
          "delta",
          d.delta,
        ]]);
      case "message_received":
        return this.#line(event.type, [
          ...where,
          ["role", d.role ?? "assistant"],
          ["content", cut(String(d.content ?? ""), OUTPUT_LIMIT)],
        ]);
      case "verification_finished":
        return this.#line(event.type, [
          ...where,
          ["passed", d.passed],
          ["failures", d.failures],
          ["faults", d.faults],
          ["items", Array.isArray(d.items) ? d.items.length : 0],
          [
            "first_problem",
            d.passed ? undefined : firstProblem(event.data) || undefined,
          ],
        ]);
      default:
        return this.#line(event.type, [
          ...where,
          ...Object.entries(d).filter(([key]) =>
            key !== "prompt_id" && !(key === "attempt" && where.length)
          ).map(([key, value]) => [key, shorten(value)] as [string, unknown]),
        ]);
    }
  }

  override finish(): string {
    return paint(this.footer(), "dim") + "\n";
  }
}
