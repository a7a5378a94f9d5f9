/**
 * The plain renderer: one readable line per event.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import { paint } from "./ansi.ts";
import type { Renderer } from "./renderer.ts";

function oneLine(value: unknown, max = 100): string {
  const text = typeof value === "string" ? value : JSON.stringify(value) ?? "";
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? flat.slice(0, max - 1) + "…" : flat;
}

function describe(event: RunEvent): string {
  const d = event.data;
  switch (event.type) {
    case "prompt_started":
      return `${d.name} (attempt ${d.attempt}, ${d.mode})`;
    case "run_started":
      return `session ${d.provider_session_id ?? "?"} model=${d.model ?? "?"}`;
    case "message_streamed":
      return oneLine(d.delta);
    case "message_received":
      return oneLine(d.content);
    case "tool_call_started":
      return `${d.tool_name} ${oneLine(d.tool_input, 80)}`;
    case "tool_call_completed":
    case "tool_call_failed":
      return `${d.tool_name ?? d.tool_call_id} ${oneLine(d.tool_output, 80)}`;
    case "token_usage_updated":
      return `${d.input_tokens ?? 0} in / ${d.output_tokens ?? 0} out`;
    case "run_completed":
      return `${d.stop_reason ?? ""}`;
    case "error_occurred":
    case "run_failed":
      return `${d.error_code ?? "error"}: ${oneLine(d.error_message)}`;
    case "session_resumed":
      return `resumed after ${d.failure_class} (${d.resume}/${d.limit})`;
    case "prompt_steered":
      return `${d.delivery}: ${oneLine(d.text)}`;
    case "verification_finished":
      return d.passed
        ? `passed (${(d.items as unknown[]).length} items)`
        : `failed: ${d.failures} failed, ${d.faults} faulted`;
    case "retry_scheduled":
      return `${d.failure_class}, retry in ${d.delay_ms} ms`;
    case "prompt_completed":
    case "prompt_failed":
      return `${d.status}${d.reason ? `: ${oneLine(d.reason, 160)}` : ""}`;
    case "run_finished":
      return `${d.status}`;
    default:
      return oneLine(d);
  }
}

const STYLES: Partial<
  Record<string, "green" | "red" | "yellow" | "cyan" | "dim">
> = {
  prompt_started: "cyan",
  prompt_completed: "green",
  prompt_failed: "red",
  error_occurred: "red",
  run_failed: "red",
  tool_call_failed: "red",
  retry_scheduled: "yellow",
  session_resumed: "yellow",
  prompt_steered: "yellow",
};

/**
 * Creates the plain renderer: one line per event, `PROMPT#ATTEMPT type
 * detail`. Thinking is dropped when the view hides it.
 */
export function createPlainRenderer(
  view: ViewSettings,
  mode: ViewSettings["log_mode"] = "compact",
): Renderer {
  let current = view;
  return {
    mode,
    render(event: RunEvent): string {
      if (
        event.type === "message_streamed" && event.data.kind === "thinking" &&
        current.thinking === "hide"
      ) {
        return "";
      }
      const where = event.prompt_id === null
        ? "--"
        : `${event.prompt_id}#${event.attempt ?? "-"}`;
      const type = event.type === "message_streamed" &&
          event.data.kind === "thinking"
        ? "thinking"
        : event.type;
      const style = STYLES[event.type];
      const head = `${paint(where, "dim")} ${
        style ? paint(type, style) : type
      }`;
      const detail = describe(event);
      return `${head}${detail ? ` ${detail}` : ""}\n`;
    },
    finish(): string {
      return "";
    },
    setView(next: ViewSettings): void {
      current = next;
    },
  };
}
