/**
 * Events as the dashboard shows them: the studio renderer's text per event,
 * and the per-prompt timeline folded from the event stream.
 *
 * @module
 */

import {
  type AmendmentRecord,
  createRenderer,
  type EventLine,
  type RunEvent,
  terminalSafe,
  type ViewSettings,
} from "../../mod.ts";
import type {
  AttemptOutcome,
  PromptTimeline,
  RenderedEvent,
  TimelineAttempt,
  TimelineMark,
} from "./_model.ts";
import { TIMELINE_TYPES, timelineSteps } from "./page/shared.ts";

/** Options for {@linkcode renderEvents}. */
export interface RenderEventsOptions {
  /**
   * The first seq to return. The renderer remembers tool calls and streamed
   * text, so pass the events from seq 1 and name where the answer starts.
   */
  from?: number;
  /** The last seq to return. */
  to?: number;
}

/** Text as lines: no trailing empty line, none at all for no text. */
function linesOf(text: string): string[] {
  if (text === "") return [];
  return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
}

/**
 * Renders events with a view as the studio renderer does, as plain text (no
 * escape codes, no control characters): the lines `run` prints for each
 * event. The view's `log_mode` is ignored (the dashboard always shows the
 * studio rendering); its `thinking`, `tool_output` and `diff` apply.
 */
export function renderEvents(
  events: EventLine[],
  view: ViewSettings,
  options: RenderEventsOptions = {},
): RenderedEvent[] {
  const render = eventRenderer(view);
  const from = options.from ?? 1;
  const to = options.to ?? Infinity;
  const rendered: RenderedEvent[] = [];
  for (const { event } of events) {
    if (event.seq > to) break;
    const one = render(event);
    if (event.seq >= from) rendered.push(one);
  }
  return rendered;
}

/**
 * One studio renderer for a run, fed its events in order from seq 1: what
 * {@linkcode renderEvents} does in one pass, one event at a time (the
 * renderer remembers tool calls, streamed text and the run's totals).
 */
export function eventRenderer(
  view: ViewSettings,
): (event: RunEvent) => RenderedEvent {
  const renderer = createRenderer({ ...view, log_mode: "studio" });
  return (event) => {
    const shown: RenderedEvent = {
      seq: event.seq,
      type: event.type,
      lines: linesOf(terminalSafe(renderer.render(event))),
    };
    if (TIMELINE_TYPES.has(event.type)) shown.event = event;
    return shown;
  };
}

/** One line of an amendment, for a mark's title. */
function amendmentText(amendment: AmendmentRecord): string {
  const entries = amendment.entries.map((entry) =>
    typeof entry === "string" ? entry : JSON.stringify(entry)
  ).join(", ");
  return `${amendment.author}: ${amendment.direction} ${amendment.clause} ` +
    `${amendment.operation}${entries ? ` ${entries}` : ""} ` +
    `(${amendment.phase}) — ${amendment.reason}`;
}

/**
 * Folds a run's events (from seq 1) into its per-prompt timeline: each
 * attempt with how it ended (`retried` and `repaired` when the prompt's next
 * attempt is a retry or a repair, `running` while it runs), each delivered
 * steer as a mark at its `prompt_steered` event. Amendments are not events:
 * those of this run (`run_id`) are marked at the last event before they
 * were made.
 */
export function foldTimeline(
  events: EventLine[],
  prompts: { id: string; name: string | null }[],
  amendments: AmendmentRecord[] = [],
): PromptTimeline[] {
  const timelines = new Map<string, PromptTimeline>();
  const timelineOf = (id: string, name: string | null): PromptTimeline => {
    let timeline = timelines.get(id);
    if (timeline === undefined) {
      timeline = { id, name, attempts: [], marks: [] };
      timelines.set(id, timeline);
    }
    return timeline;
  };
  for (const prompt of prompts) timelineOf(prompt.id, prompt.name);
  const open = new Map<string, TimelineAttempt>();
  const close = (id: string, outcome: AttemptOutcome): void => {
    const attempt = open.get(id);
    if (attempt === undefined) return;
    attempt.outcome = outcome;
    open.delete(id);
  };
  for (const { event } of events) {
    const d = event.data;
    const name = typeof d.name === "string" ? d.name : null;
    if (event.prompt_id !== null) {
      timelineOf(event.prompt_id, name).name ??= name;
    }
    for (const step of timelineSteps(event)) {
      switch (step.kind) {
        case "end_all":
          for (const prompt of [...open.keys()]) close(prompt, step.outcome);
          break;
        case "end":
          close(step.prompt, step.outcome);
          break;
        case "start": {
          const timeline = timelineOf(step.prompt, step.name);
          const attempt: TimelineAttempt = {
            number: step.number ?? timeline.attempts.length + 1,
            mode: step.mode,
            outcome: "running",
            first_seq: step.seq,
            last_seq: step.seq,
          };
          timeline.attempts.push(attempt);
          open.set(step.prompt, attempt);
          break;
        }
        case "reach": {
          const attempt = open.get(step.prompt);
          if (attempt !== undefined) attempt.last_seq = step.seq;
          break;
        }
        case "steer":
          timelineOf(step.prompt, null).marks.push({
            kind: "steer",
            seq: step.seq,
            text: step.text,
          });
          break;
      }
    }
  }
  const runId = events[0]?.event.run_id ?? null;
  for (const amendment of amendments) {
    if (runId === null || amendment.run_id !== runId) continue;
    const made = Date.parse(amendment.at);
    const before = events.findLast(({ event }) => Date.parse(event.at) <= made);
    const mark: TimelineMark = {
      kind: "amendment",
      seq: before?.event.seq ?? events[0]!.event.seq,
      text: amendmentText(amendment),
    };
    timelineOf(amendment.prompt, null).marks.push(mark);
  }
  for (const timeline of timelines.values()) {
    timeline.marks.sort((a, b) => a.seq - b.seq);
  }
  return [...timelines.values()];
}
