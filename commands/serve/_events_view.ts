/**
 * Events as the dashboard shows them: the studio renderer's text per event,
 * and the per-prompt timeline folded from the event stream. STUB: the pages
 * helper replaces this file (same exports, same signatures).
 *
 * @module
 */

import type { EventLine, ViewSettings } from "../../mod.ts";
import type { PromptTimeline, RenderedEvent } from "./_model.ts";

/** Renders events with a view, as the studio renderer would, without escapes. */
export function renderEvents(
  events: EventLine[],
  _view: ViewSettings,
): RenderedEvent[] {
  return events.map(({ event }) => ({
    seq: event.seq,
    type: event.type,
    lines: [],
  }));
}

/** Folds a run's events (from seq 1) into its per-prompt timeline. */
export function foldTimeline(
  _events: EventLine[],
  _prompts: { id: string; name: string | null }[],
): PromptTimeline[] {
  return [];
}
