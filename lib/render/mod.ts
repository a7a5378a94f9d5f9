/**
 * Rendering: turning canonical events into text for people.
 *
 * @module
 */

export {
  createRenderer,
  type CreateRendererOptions,
} from "./create_renderer.ts";
export type { OpenToolCall, Renderer, RenderHandover } from "./renderer.ts";
export {
  paint,
  stripAnsi,
  type Style,
  terminalSafe,
  terminalSafeData,
  type TerminalSafeOptions,
} from "./ansi.ts";
export {
  logFileSink,
  ndjsonSink,
  type RenderSink,
  terminalSink,
  type WriteText,
} from "./sinks.ts";
export { readCurrentDiffs, type RenderContext } from "./current_diff.ts";
