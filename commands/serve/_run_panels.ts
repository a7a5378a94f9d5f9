/**
 * A run page's panels as HTML: the snapshot, the timeline, the events, the
 * control log and the contracts; every text escaped.
 *
 * @module
 */

import type { ContractView, LogEntry, Snapshot } from "../../mod.ts";
import {
  attempt,
  cost,
  duration,
  el,
  esc,
  progress,
  tokens,
  UNKNOWN,
} from "./_html.ts";
import type { PromptTimeline, RenderedEvent, RunPageModel } from "./_model.ts";
import { chainHtml } from "./_chain_panel.ts";
import {
  attentionLine,
  budgetWords,
  logText,
  promptText,
  viewText,
  words,
} from "./page/shared.ts";

/** A term and its value in the snapshot panel. */
function field(name: string, label: string, value: string): string {
  return `<div class="field"><dt>${esc(label)}</dt>${
    el("dd", { "data-field": name }, esc(value))
  }</div>`;
}

/** The snapshot panel: the live snapshot, or the row when there is none. */
export function snapshotPanel(model: RunPageModel): string {
  const s: Snapshot | null = model.snapshot;
  const row = model.row;
  const status = s?.status ?? row.status;
  const prompt = s
    ? promptText(s.prompt_id, s.prompt_name)
    : promptText(row.current.id, row.current.name);
  const attention = s?.attention ?? row.attention;
  const fields = [
    field("status", "status", words(status)),
    `<div class="field attention-field"><dt>attention</dt>${
      el(
        "dd",
        {
          "data-field": "attention",
          "data-attention": attention?.reason ?? "",
        },
        esc(attentionLine(attention)),
      )
    }</div>`,
    field(
      "progress",
      "progress",
      progress(row.progress.completed, row.progress.selected),
    ),
    field("prompt", "prompt", prompt),
    field(
      "attempt",
      "attempt",
      s
        ? attempt(s.attempt, s.mode)
        : attempt(row.attempt.number, row.attempt.mode, row.attempt.detail),
    ),
    field("view", "view", viewText(s?.view ?? model.view)),
    field(
      "tokens",
      "tokens",
      s
        ? tokens(s.input_tokens, s.output_tokens)
        : tokens(row.input_tokens, row.output_tokens),
    ),
    field("cost", "cost", cost(s ? s.cost_usd : row.cost_usd)),
    field("budget", "budget", budgetWords(s?.budget ?? null)),
    field(
      "steers",
      "steers",
      s ? `${s.steer_count} of ${s.max_steers}` : UNKNOWN,
    ),
    field("elapsed", "elapsed", duration(s?.elapsed_ms ?? row.elapsed_ms)),
    field(
      "model",
      "agent",
      s ? `${s.provider ?? UNKNOWN}/${s.model ?? UNKNOWN}` : UNKNOWN,
    ),
    field("runner", "runner", row.runner.replaceAll("_", " ")),
    field("events", "events", s ? String(s.last_seq) : UNKNOWN),
  ].join("");
  return el(
    "section",
    { id: "snapshot", "data-status": status },
    `<h2>Snapshot</h2><dl>${fields}</dl>`,
  );
}

/** One prompt of the timeline: its attempts and marks in seq order. */
function timelinePrompt(timeline: PromptTimeline): string {
  const items: { seq: number; order: number; html: string }[] = [];
  for (const a of timeline.attempts) {
    items.push({
      seq: a.first_seq,
      order: 0,
      html: el(
        "span",
        {
          class: `attempt outcome-${a.outcome}`,
          "data-attempt": a.number,
          "data-mode": a.mode,
          "data-first": a.first_seq,
          "data-last": a.last_seq,
          title:
            `attempt ${a.number} (${a.mode}): ${a.outcome}, events ${a.first_seq}–${a.last_seq}`,
        },
        esc(`${a.number} ${a.mode}`),
      ),
    });
  }
  for (const mark of timeline.marks) {
    items.push({
      seq: mark.seq,
      order: 1,
      html: el(
        "span",
        {
          class: `mark ${mark.kind}`,
          "data-seq": mark.seq,
          title: `${mark.kind} at event ${mark.seq}: ${mark.text}`,
        },
        mark.kind === "steer" ? "»" : "§",
      ),
    });
  }
  items.sort((a, b) => a.seq - b.seq || a.order - b.order);
  return el(
    "div",
    { class: "prompt", "data-prompt": timeline.id },
    el(
      "span",
      { class: "prompt-name" },
      esc(`${timeline.id}${timeline.name ? ` ${timeline.name}` : ""}`),
    ) + el("span", { class: "segments" }, items.map((i) => i.html).join("")),
  );
}

/** The timeline with, for a run page, the amendments its model lacks. */
export function timelineSection(model: RunPageModel): string {
  const folded = model.timeline.map((t) => ({
    ...t,
    marks: [...t.marks],
  }));
  // Amendments are not events: when the timeline has none of this run's,
  // mark them after the prompt's last attempt.
  for (const view of model.contracts) {
    const timeline = folded.find((t) => t.id === view.prompt_id);
    if (timeline === undefined) continue;
    if (timeline.marks.some((m) => m.kind === "amendment")) continue;
    const seq = timeline.attempts.at(-1)?.last_seq ?? 0;
    for (const a of view.amendments) {
      if (a.run_id !== model.row.run) continue;
      timeline.marks.push({
        kind: "amendment",
        seq,
        text:
          `${a.author}: ${a.direction} ${a.clause} (${a.phase}) — ${a.reason}`,
      });
    }
  }
  const last = Math.max(
    0,
    ...folded.flatMap((t) => t.attempts.map((a) => a.last_seq)),
    ...folded.flatMap((t) => t.marks.map((m) => m.seq)),
    ...model.events.map((e) => e.seq),
  );
  const legend =
    ["completed", "retried", "repaired", "failed", "interrupted", "running"]
      .map((o) =>
        `<span class="legend-item"><span class="swatch outcome-${o}"></span>${o}</span>`
      )
      .join("") +
    `<span class="legend-item"><span class="mark steer">»</span>steer</span>` +
    `<span class="legend-item"><span class="mark amendment">§</span>amendment</span>`;
  return el(
    "section",
    { id: "timeline", "data-seq": last },
    `<h2>Timeline</h2><div class="legend">${legend}</div>${
      folded.map(timelinePrompt).join("")
    }`,
  );
}

/** One rendered event. */
export function eventHtml(event: RenderedEvent): string {
  return el(
    "div",
    {
      class: event.lines.length === 0 ? "event empty" : "event",
      "data-seq": event.seq,
      "data-type": event.type,
    },
    el("pre", {}, esc(event.lines.join("\n"))),
  );
}

/** The event stream: the newest events, then what the script appends. */
export function eventsSection(model: RunPageModel): string {
  const earlier = model.earlier > 0
    ? el(
      "p",
      { class: "earlier", "data-earlier": model.earlier },
      esc(
        `${model.earlier} earlier event${
          model.earlier === 1 ? "" : "s"
        } not shown`,
      ),
    )
    : "";
  return `<section id="events-panel"><h2>Events</h2>${
    el(
      "section",
      { id: "events", "aria-live": "polite" },
      earlier + model.events.map(eventHtml).join(""),
    )
  }</section>`;
}

/** One control-log entry. */
export function logEntryHtml(entry: LogEntry): string {
  return el(
    "div",
    {
      class: "log-entry",
      "data-request": entry.request_id ?? "",
      "data-outcome": entry.outcome,
      "data-command": entry.command,
      "data-at": entry.at,
    },
    esc(logText(entry)),
  );
}

/** The control log, newest last, after whether its audit chain holds. */
export function logSection(
  log: LogEntry[],
  chain: RunPageModel["chain"] = null,
): string {
  return el(
    "section",
    { id: "log" },
    `<h2>Control log</h2>${chainHtml(chain)}${log.map(logEntryHtml).join("")}`,
  );
}

/** An entry of a contract clause as text. */
function entryText(entry: unknown): string {
  return typeof entry === "string" ? entry : JSON.stringify(entry);
}

/** One prompt's contract: packet vs enforced, and its amendments. */
export function contractHtml(view: ContractView): string {
  const rows = view.diff.map((d) =>
    el(
      "tr",
      { class: `change-${d.change}` },
      el("td", {}, esc(d.clause)) + el("td", {}, esc(d.entry)) +
        el("td", { class: "in-packet" }, d.change === "added" ? "" : "✓") +
        el("td", { class: "in-enforced" }, d.change === "removed" ? "" : "✓") +
        el("td", { class: "change" }, esc(d.change)),
    )
  ).join("");
  const amendments = view.amendments.map((a) =>
    el(
      "li",
      {
        class: `amendment direction-${a.direction}`,
        "data-phase": a.phase,
      },
      esc(
        `${a.at} ${a.author}: ${a.direction} ${a.clause} ${a.operation}${
          a.entries.length ? ` ${a.entries.map(entryText).join(", ")}` : ""
        } · phase ${a.phase}${a.persisted ? " · persisted" : ""} — ${a.reason}`,
      ),
    )
  ).join("");
  return el(
    "div",
    { class: "contract", "data-prompt": view.prompt_id },
    el("h3", {}, esc(`prompt ${view.prompt_id}`)) +
      (rows === ""
        ? `<p class="empty-note">No verify clauses.</p>`
        : `<table class="contract-diff"><thead><tr><th>clause</th><th>entry</th><th>packet</th><th>enforced</th><th>change</th></tr></thead><tbody>${rows}</tbody></table>`) +
      (amendments === ""
        ? `<p class="empty-note">No amendments.</p>`
        : `<ol class="amendments">${amendments}</ol>`),
  );
}

/** The contract panel of every prompt. */
export function contractSection(contracts: ContractView[]): string {
  return el(
    "section",
    { id: "contract" },
    `<h2>Contract</h2>${contracts.map(contractHtml).join("")}`,
  );
}
