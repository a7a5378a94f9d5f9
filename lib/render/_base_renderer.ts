/**
 * What every renderer shares: the view, tool calls remembered by id (so a
 * finish line knows its tool's name), counters, and a text run that streamed
 * deltas append to.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import { asText } from "./_format.ts";
import { terminalSafeData } from "./ansi.ts";
import type { RenderContext } from "./worktree_diff.ts";
import { fileChangeOf } from "./diff.ts";
import type { OpenToolCall, Renderer, RenderHandover } from "./renderer.ts";
import type { ToolResult } from "./tool_summary.ts";
import { isRecord } from "../shared/is_record.ts";

/** The base of the three renderers. */
export abstract class BaseRenderer implements Renderer {
  /** The log mode this renderer implements. */
  abstract readonly mode: ViewSettings["log_mode"];
  /** The view in force. */
  protected view: ViewSettings;
  /** Events rendered (thinking dropped by the view does not count). */
  protected events: number = 0;
  /** Tool calls started. */
  protected tools: number = 0;
  /** Tool calls started and not yet finished, by id. */
  protected started: Map<string, OpenToolCall> = new Map();
  /** The kind of text run the current line holds, if any. */
  protected run: "text" | "thinking" | null = null;
  /**
   * Whether assistant text streamed since the last whole message (kept by
   * `render()`; read while rendering the message that ends it).
   */
  protected streamed: boolean = false;
  /** The type of the last event rendered (not dropped by the view). */
  protected previous: string | null = null;

  /**
   * Creates a renderer for a view; a replaced renderer's handover tells it
   * what was shown already.
   */
  constructor(view: ViewSettings, handover?: RenderHandover) {
    this.view = { ...view };
    if (handover !== undefined) {
      this.streamed = handover.streamed;
      this.started = new Map(Object.entries(handover.open_tools));
      this.previous = handover.last_event;
    }
  }

  /** What a successor must know of what this renderer showed. */
  handover(): RenderHandover {
    return {
      streamed: this.streamed,
      open_tools: Object.fromEntries(this.started),
      last_event: this.previous,
    };
  }

  /** Applies new view settings from the next event on. */
  setView(view: ViewSettings): void {
    this.view = { ...view };
  }

  /** Ends the current text run (a newline), if one is open. */
  protected closeRun(): string {
    if (this.run === null) return "";
    this.run = null;
    return "\n";
  }

  /** The tool a completion event belongs to, and what it did. */
  protected toolResult(event: RunEvent): ToolResult {
    const d = event.data;
    const id = String(d.tool_call_id ?? "");
    const known = this.started.get(id);
    this.started.delete(id);
    const name = typeof d.tool_name === "string" && d.tool_name
      ? d.tool_name
      : known?.name ?? "unknown";
    // A completion may carry what the start did not (an ACP agent's diff).
    const input = isRecord(d.tool_input)
      ? { ...known?.input, ...d.tool_input }
      : known?.input;
    const exit = typeof d.exit_code === "number" ? d.exit_code : null;
    const failed = event.type === "tool_call_failed" || d.is_error === true ||
      d.status === "failed" || (exit !== null && exit !== 0);
    return {
      name,
      input,
      output: asText(d.tool_output),
      failed,
      exit_code: exit,
      duration_ms: typeof d.duration_ms === "number" ? d.duration_ms : null,
      change: fileChangeOf(name, input),
    };
  }

  /**
   * Renders one event (see {@linkcode Renderer.render}). Everything in the
   * event and the context came from an agent, an operator or a file: it is
   * made terminal-safe before the renderer adds its own styling.
   */
  render(untrusted: RunEvent, untrustedContext: RenderContext = {}): string {
    const event = terminalSafeData(untrusted);
    const context = terminalSafeData(untrustedContext);
    if (
      event.type === "message_streamed" && event.data.kind === "thinking" &&
      this.view.thinking === "hide"
    ) {
      return "";
    }
    this.events++;
    if (event.type === "tool_call_started") {
      this.tools++;
      const d = event.data;
      this.started.set(String(d.tool_call_id ?? ""), {
        name: typeof d.tool_name === "string" ? d.tool_name : "unknown",
        input: isRecord(d.tool_input) ? d.tool_input : {},
      });
    }
    const text = this.renderEvent(event, context);
    this.previous = event.type;
    if (event.type === "message_streamed" && event.data.kind !== "thinking") {
      this.streamed = true;
    } else if (
      event.type === "message_received" || event.type === "run_started"
    ) {
      this.streamed = false;
    }
    return text;
  }

  /** Renders an event that is not dropped by the view. */
  protected abstract renderEvent(
    event: RunEvent,
    context: RenderContext,
  ): string;

  /** The `--- N events, M tools ---` footer line. */
  protected footer(): string {
    return `--- ${this.events} event${
      this.events === 1 ? "" : "s"
    }, ${this.tools} tool${this.tools === 1 ? "" : "s"} ---`;
  }

  /** Closes the output at the end of a run. */
  finish(): string {
    return this.closeRun();
  }

  /** Closes an open line when the renderer is replaced. */
  detach(): string {
    return this.closeRun();
  }
}
