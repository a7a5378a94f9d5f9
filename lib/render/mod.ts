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
  ndjsonSink,
  type RenderSink,
  terminalSink,
  transcriptSink,
  type WriteText,
} from "./sinks.ts";
export { readWorktreeDiffs, type RenderContext } from "./worktree_diff.ts";
