/**
 * Rendering: turning canonical events into text for people.
 *
 * @module
 */

export { createRenderer } from "./create_renderer.ts";
export type { Renderer } from "./renderer.ts";
export { paint, stripAnsi, type Style } from "./ansi.ts";
