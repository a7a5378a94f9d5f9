/**
 * Choosing a renderer for a view.
 *
 * @module
 */

import type { ViewSettings } from "../shared/view.ts";
import { CompactRenderer } from "./compact_renderer.ts";
import type { Renderer } from "./renderer.ts";
import { StudioRenderer } from "./studio_renderer.ts";
import { VerboseRenderer } from "./verbose_renderer.ts";

/**
 * Creates the renderer for a view's `log_mode`: `compact`, `verbose` or
 * `studio`. The renderer does no I/O; sinks write its text.
 *
 * @param view The view settings in force.
 * @returns A fresh renderer; it holds nothing from any earlier one.
 *
 * @example Usage
 * ```ts
 * import { createRenderer, DEFAULT_VIEW, stripAnsi } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const renderer = createRenderer({ ...DEFAULT_VIEW, log_mode: "verbose" });
 * const text = renderer.render({
 *   v: 1, seq: 1, at: "2026-11-30T00:00:00.000Z", run_id: "r", prompt_id: "01",
 *   attempt: 1, type: "token_usage_updated", data: { input_tokens: 5, output_tokens: 2 },
 * });
 * assert.equal(stripAnsi(text), "[token_usage_updated] prompt=01 attempt=1 input_tokens=5 output_tokens=2\n");
 * ```
 */
export function createRenderer(view: ViewSettings): Renderer {
  switch (view.log_mode) {
    case "verbose":
      return new VerboseRenderer(view);
    case "studio":
      return new StudioRenderer(view);
    default:
      return new CompactRenderer(view);
  }
}
