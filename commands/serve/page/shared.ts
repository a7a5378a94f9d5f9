/**
 * What the dashboard's server and its page code both use, from one module:
 * the page is built from it (`deno task gen`) and the server imports it.
 * Plain data and functions only: no Deno and no DOM.
 *
 * @module
 */

/** The event types that change a run page's timeline; the rest only move its seq on. */
export const TIMELINE_TYPES: ReadonlySet<string> = new Set([
  "prompt_started",
  "retry_scheduled",
  "prompt_completed",
  "prompt_failed",
  "prompt_steered",
  "run_finished",
]);
