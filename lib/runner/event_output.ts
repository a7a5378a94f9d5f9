/**
 * The run's output: the renderer for the current view, the sink for the
 * caller's output (terminal text or NDJSON), and the attempt's transcript.
 *
 * @module
 */

import { createRenderer } from "../render/create_renderer.ts";
import {
  pathOnlyChanges,
  readWorktreeDiffs,
  type RenderContext,
} from "../render/worktree_diff.ts";
import { vouchParsed } from "../render/ansi.ts";
import type { Renderer } from "../render/renderer.ts";
import { ndjsonSink, type RenderSink, terminalSink } from "../render/sinks.ts";
import { encodedJson } from "../shared/event_json.ts";
import type { RunEvent } from "../shared/events.ts";
import type { ViewSettings } from "../shared/view.ts";
import type { RunOutput } from "./run_options.ts";
import { Transcript, type TranscriptInfo } from "./transcript.ts";

/**
 * Renders each event once and hands the text to every sink: the caller's
 * output and, during an attempt, its transcript.
 */
export class EventOutput {
  #view: ViewSettings;
  #renderer: Renderer;
  readonly #outputSink: RenderSink | null;
  #transcript: Transcript | null = null;
  #tools = new Map<string, { name: string; input: Record<string, unknown> }>();
  /** The working directory a path-only change's `git diff` is read in. */
  cwd: string | null = null;

  constructor(view: ViewSettings, output: RunOutput | undefined) {
    this.#view = view;
    this.#renderer = createRenderer(view);
    this.#outputSink = output === undefined
      ? null
      : output.json
      ? ndjsonSink((text) => output.write(text))
      : terminalSink((text) => output.write(text), {
        color: output.color === true,
      });
  }

  /** The view in force. */
  get view(): ViewSettings {
    return { ...this.#view };
  }

  /**
   * Takes over view changes an earlier process of this run applied, before
   * anything was shown.
   */
  restoreView(change: Partial<ViewSettings>): void {
    const next = { ...this.#view, ...change };
    if (next.log_mode !== this.#view.log_mode) {
      this.#renderer = createRenderer(next);
    } else this.#renderer.setView(next);
    this.#view = next;
  }

  /**
   * Applies a view change from the next event on.
   *
   * @returns The view now in force.
   */
  async applyView(change: Partial<ViewSettings>): Promise<ViewSettings> {
    const next = { ...this.#view, ...change };
    const replace = next.log_mode !== this.#view.log_mode;
    this.#view = next;
    if (replace) {
      // A new renderer drops the old one's counters, but a line it left open
      // is closed, and what it showed (a message that streamed, tool calls
      // under way) is handed over so that nothing is shown twice.
      const handover = this.#renderer.handover();
      await this.text(this.#renderer.detach());
      this.#renderer = createRenderer(next, { handover });
    } else {
      this.#renderer.setView(next);
    }
    return { ...next };
  }

  /** Renders an event and writes it to every sink. */
  async show(event: RunEvent): Promise<void> {
    if (event.type === "tool_call_started") {
      const data = event.data;
      this.#tools.set(String(data.tool_call_id ?? ""), {
        name: String(data.tool_name ?? ""),
        input: data.tool_input ?? {},
      });
    }
    const context = await this.#renderContext(event);
    // The stream's line of the event, when it has one, shows whether the
    // event's text needs making safe.
    const json = encodedJson(event);
    if (json !== null) vouchParsed(event, json);
    const text = this.#renderer.render(event, context);
    vouchParsed(null);
    if (this.#outputSink) await this.#outputSink.event(event, text);
    if (this.#transcript) await this.#transcript.sink.event(event, text);
  }

  /** Text not tied to an event (a footer, a line closed on a renderer swap). */
  async text(text: string): Promise<void> {
    if (text === "") return;
    if (this.#outputSink) await this.#outputSink.text(text);
    if (this.#transcript) await this.#transcript.sink.text(text);
  }

  /**
   * A line for the attempt's transcript only (the agent's argv and version,
   * a line of its output that is not an event). Never throws: a failed
   * write surfaces on the transcript's next flush.
   */
  note(text: string): void {
    const transcript = this.#transcript;
    if (transcript === null) return;
    transcript.sink.text(`${text.replace(/\n+$/, "")}\n`).catch(() => {});
  }

  /** Closes the output at the end of the run (an open line, a footer). */
  async finish(): Promise<void> {
    await this.text(this.#renderer.finish());
  }

  /** Opens an attempt's transcript, closing the previous one. */
  async openTranscript(info: TranscriptInfo): Promise<void> {
    await this.closeTranscript();
    this.#transcript = await Transcript.open(info);
  }

  /** Writes what the transcript holds back (an event batch ended). */
  async flushTranscript(): Promise<void> {
    await this.#transcript?.flush();
  }

  /** Writes out and closes the attempt's transcript, if one is open. */
  async closeTranscript(): Promise<void> {
    const transcript = this.#transcript;
    this.#transcript = null;
    await transcript?.close();
  }

  /**
   * What the renderer cannot read itself: the current `git diff` of a
   * path-only change, when the studio view shows full diffs.
   */
  async #renderContext(event: RunEvent): Promise<RenderContext> {
    if (
      this.#renderer.mode !== "studio" || this.#view.diff !== "full" ||
      this.cwd === null
    ) {
      return {};
    }
    const paths = pathOnlyChanges(event, this.#tools);
    if (paths.length === 0) return {};
    return { worktree_diffs: await readWorktreeDiffs(paths, this.cwd) };
  }
}
