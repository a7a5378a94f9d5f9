/**
 * Choosing a renderer for a view.
 *
 * @module
 */

import type { ViewSettings } from "../shared/view.ts";
import { CompactRenderer } from "./compact_renderer.ts";
import type { Renderer, RenderHandover } from "./renderer.ts";
import { StudioRenderer } from "./studio_renderer.ts";
import { VerboseRenderer } from "./verbose_renderer.ts";

/** Options for {@linkcode createRenderer}. */
export interface CreateRendererOptions {
  /**
   * The handover of the renderer this one replaces mid-run (its
   * `handover()`), so that what it showed is not shown again.
   */
  handover?: RenderHandover;
}

/**
 * Creates the renderer for a view's `log_mode`: `compact`, `verbose` or
 * `studio`. The renderer does no I/O; sinks write its text.
 *
 * @param view The view settings in force.
 * @param options The handover of a renderer this one replaces.
 * @returns A fresh renderer; of an earlier one it knows only the handover.
 *
 * @example Usage
 * ```ts
 * import { createRenderer, stripAnsi } from "./mod.ts";
 * import { DEFAULT_VIEW } from "../shared/mod.ts";
 * import assert from "node:assert/strict";
 *
 * const renderer = createRenderer({ ...DEFAULT_VIEW, log_mode: "verbose" });
 * const text = renderer.render({
 *   v: 1, seq: 1, at: "2026-11-30T00:00:00.000Z", run_id: "r", prompt_id: "01",
 *   attempt: 1, type: "token_usage_updated",
 *   data: { input_tokens: 5, output_tokens: 2, total_tokens: 7 },
 * });
 * assert.equal(stripAnsi(text), "[token_usage_updated] prompt=01 attempt=1 input_tokens=5 output_tokens=2 total_tokens=7\n");
 * ```
 */
export function createRenderer(
  view: ViewSettings,
  options: CreateRendererOptions = {},
): Renderer {
  switch (view.log_mode) {
    case "verbose":
      return new VerboseRenderer(view, options.handover);
    case "studio":
      return new StudioRenderer(view, options.handover);
    default:
      return new CompactRenderer(view, options.handover);
  }
}
