/**
 * A run page's timeline, folded live from the events that change it (the
 * fold is the server's, `timelineSteps`), and its control log, whose
 * amendments of this run are marked on the timeline too.
 *
 * @module
 */

import { byData, node } from "./dom.ts";
import {
  type AttemptOutcome,
  isNum,
  type LogData,
  logText,
  TIMELINE_TYPES,
  type TimelineEvent,
  timelineSteps,
} from "./shared.ts";

/** The timeline panel. */
export class Timeline {
  readonly #box: HTMLElement | null;
  /** The newest seq folded (or passed over). */
  seq: number;

  /** The timeline in `box` (none on a page without one). */
  constructor(box: HTMLElement | null) {
    this.#box = box;
    this.seq = Number(box?.getAttribute("data-seq")) || 0;
  }

  /** A prompt's row, made when it is new. */
  promptRow(id: string): HTMLElement | null {
    const box = this.#box;
    if (!box) return null;
    let row = byData(box, ".prompt", "data-prompt", id);
    if (row) return row;
    row = node("div", "prompt");
    row.setAttribute("data-prompt", id);
    row.appendChild(node("span", "prompt-name", id));
    row.appendChild(node("span", "segments"));
    box.appendChild(row);
    return row;
  }

  /** Moves the timeline's seq on past an event that does not change it. */
  pass(seq: number): void {
    if (isNum(seq) && seq > this.seq) this.seq = seq;
  }

  /** Folds one event in. */
  fold(ev: TimelineEvent): void {
    const box = this.#box;
    if (!box || !ev || !isNum(ev.seq) || ev.seq <= this.seq) return;
    this.seq = ev.seq;
    if (!TIMELINE_TYPES.has(ev.type)) return;
    box.setAttribute("data-seq", String(ev.seq));
    const end = (span: Element | null, outcome: AttemptOutcome): void => {
      if (span) span.className = `attempt outcome-${outcome}`;
    };
    for (const step of timelineSteps(ev)) {
      if (step.kind === "end_all") {
        for (const span of box.querySelectorAll(".attempt.outcome-running")) {
          end(span, step.outcome);
        }
        continue;
      }
      const row = this.promptRow(step.prompt)!;
      const segments = row.querySelector(".segments")!;
      const open = row.querySelector(".attempt.outcome-running");
      switch (step.kind) {
        case "end":
          end(open, step.outcome);
          break;
        case "reach":
          open?.setAttribute("data-last", String(step.seq));
          break;
        case "start": {
          const number = step.number ??
            row.querySelectorAll(".attempt").length + 1;
          const span = node(
            "span",
            "attempt outcome-running",
            `${number} ${step.mode}`,
          );
          span.setAttribute("data-attempt", String(number));
          span.setAttribute("data-mode", step.mode);
          span.setAttribute("data-first", String(step.seq));
          span.setAttribute("data-last", String(step.seq));
          segments.appendChild(span);
          break;
        }
        case "steer": {
          const mark = node("span", "mark steer", "\u00bb");
          mark.setAttribute("data-seq", String(step.seq));
          mark.setAttribute(
            "title",
            `steer at event ${step.seq}: ${step.text}`,
          );
          segments.appendChild(mark);
          break;
        }
      }
    }
  }

  /** Marks an amendment of this run, at the newest event folded. */
  amendment(entry: LogData): void {
    if (
      !this.#box || entry.prompt_id === null || entry.prompt_id === undefined
    ) {
      return;
    }
    const p = entry.params ?? {};
    const mark = node("span", "mark amendment", "\u00a7");
    mark.setAttribute("data-seq", String(this.seq));
    mark.setAttribute(
      "title",
      `amendment at event ${this.seq}: ${
        entry.author || "unknown"
      }: ${entry.command} ${String(p.clause ?? "")} (${
        String(p.phase ?? "")
      }) \u2014 ${entry.reason || ""}`,
    );
    this.promptRow(entry.prompt_id)!.querySelector(".segments")!.appendChild(
      mark,
    );
  }
}

function logKey(el: Element): string {
  return [
    el.getAttribute("data-at"),
    el.getAttribute("data-request"),
    el.getAttribute("data-command"),
    el.getAttribute("data-outcome"),
  ].join(" ");
}

/** The control-log panel: each entry once, in the order they come. */
export class LogPanel {
  readonly box: HTMLElement | null;
  readonly #logged = new Set<string>();

  /** The panel in `box`, and the entries it holds. */
  constructor(box: HTMLElement | null) {
    this.box = box;
    for (const el of box?.querySelectorAll(".log-entry") ?? []) {
      this.#logged.add(logKey(el));
    }
  }

  /** Adds `entry` unless it is shown; whether it was new. */
  add(entry: LogData): boolean {
    if (!entry || typeof entry.outcome !== "string" || !this.box) return false;
    const el = node("div", "log-entry", logText(entry));
    el.setAttribute("data-request", entry.request_id || "");
    el.setAttribute("data-outcome", entry.outcome);
    el.setAttribute("data-command", String(entry.command));
    el.setAttribute("data-at", String(entry.at));
    const key = logKey(el);
    if (this.#logged.has(key)) return false;
    this.#logged.add(key);
    this.box.appendChild(el);
    return true;
  }
}
