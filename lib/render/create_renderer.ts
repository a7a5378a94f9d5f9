/**
 * Choosing a renderer for a view.
 *
 * @module
 */

import type { ViewSettings } from "../shared/view.ts";
import { createPlainRenderer } from "./plain_renderer.ts";
import type { Renderer } from "./renderer.ts";

/**
 * Creates the renderer for a view's `log_mode`.
 *
 * @param view The view settings in force.
 * @returns A fresh renderer; it holds nothing from any earlier one.
 */
export function createRenderer(view: ViewSettings): Renderer {
  return createPlainRenderer(view, view.log_mode);
}
