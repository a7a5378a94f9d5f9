/**
 * The dashboard's HTML pages: plain server-rendered HTML, every text from a
 * run, an agent, a packet or an operator escaped, no inline script or style
 * (the page's script and style sheet are `/static/app.js` and
 * `/static/app.css`; the script reads what it needs from `data-` attributes).
 *
 * @module
 */

import {
  CLAUSES,
  type ContractView,
  type LogEntry,
  type Snapshot,
  VIEW_OPTIONS,
} from "../../mod.ts";
import {
  attempt,
  cost,
  duration,
  el,
  esc,
  progress,
  runPath,
  tokens,
  UNKNOWN,
} from "./_html.ts";
import type {
  PageContext,
  PromptTimeline,
  RenderedEvent,
  RunPageModel,
  RunRow,
  ShownOutcome,
} from "./_model.ts";
import {
  logText,
  promptText,
  ROW_FIELDS,
  rowCells,
  VIEW_KEYS,
  viewText,
  words,
} from "./page/shared.ts";

type Attributes = Record<string, string | number | boolean | null | undefined>;

/** A whole page around its body. */
function layout(title: string, body: Attributes, main: string): string {
  return "<!doctype html>\n" +
    `<html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>${esc(title)}</title>` +
    `<link rel="stylesheet" href="/static/app.css">` +
    `<script src="/static/app.js" defer></script>` +
    `</head>${el("body", body, main)}</html>\n`;
}

/** The page header: the dashboard's name, a way back, who acts. */
function header(context: PageContext | null, trail: string): string {
  const who = context === null
    ? ""
    : `<span class="author">acting as ${esc(context.author)}</span>`;
  return `<header><a class="home" href="/">prompt_runner</a>${trail}${who}</header>`;
}

/** One cell of a row, named for the page's script. */
function cell(field: string, text: string, extra: Attributes = {}): string {
  return el("td", { "data-field": field, ...extra }, esc(text));
}

/** The id of a run in `data-run` (`{root}/{run}`). */
function runKey(row: RunRow): string {
  return `${row.root}/${row.run}`;
}

/** One row of the runs table. */
function runRow(row: RunRow): string {
  const name = row.packet ?? row.target;
  const link = row.run === ""
    ? el("span", { class: "run-name" }, esc(name))
    : el(
      "a",
      { class: "run-link", href: runPath(row.root, row.run) },
      esc(name),
    );
  const { text, classes } = rowCells(row);
  return el(
    "tr",
    { class: "run", "data-run": runKey(row), "data-status": row.status },
    el(
      "td",
      { "data-field": "name" },
      `${link} ${el("span", { class: "run-id" }, esc(row.run || "never run"))}`,
    ) +
      ROW_FIELDS.map((name) => cell(name, text[name], { class: classes[name] }))
        .join(""),
  );
}

/**
 * The runs page: one row per run, updated live from `/runs/stream` by the
 * page's script (`event: snapshot`, one `RunRow` each).
 */
export function runsPage(rows: RunRow[], context: PageContext): string {
  const head = [
    "run",
    "target",
    "status",
    "progress",
    "prompt",
    "attempt",
    "elapsed",
    "tokens",
    "cost",
    "last event",
    "runner",
  ].map((name) => `<th scope="col">${name}</th>`).join("");
  const empty = rows.length === 0
    ? `<p class="empty-note" id="no-runs">No runs yet: they appear here as they start.</p>`
    : "";
  return layout(
    "prompt_runner runs",
    { "data-page": "runs" },
    header(context, "") +
      `<main><h1>Runs</h1>${empty}` +
      `<table id="runs"><thead><tr>${head}</tr></thead><tbody>${
        rows.map(runRow).join("")
      }</tbody></table></main>`,
  );
}

/** A term and its value in the snapshot panel. */
function field(name: string, label: string, value: string): string {
  return `<div class="field"><dt>${esc(label)}</dt>${
    el("dd", { "data-field": name }, esc(value))
  }</div>`;
}

/** The snapshot panel: the live snapshot, or the row when there is none. */
function snapshotPanel(model: RunPageModel): string {
  const s: Snapshot | null = model.snapshot;
  const row = model.row;
  const status = s?.status ?? row.status;
  const prompt = s
    ? promptText(s.prompt_id, s.prompt_name)
    : promptText(row.current.id, row.current.name);
  const fields = [
    field("status", "status", words(status)),
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
function timelineSection(model: RunPageModel): string {
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
function eventsSection(model: RunPageModel): string {
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

/** The control log, newest last. */
function logSection(log: LogEntry[]): string {
  return el(
    "section",
    { id: "log" },
    `<h2>Control log</h2>${log.map(logEntryHtml).join("")}`,
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
function contractSection(contracts: ContractView[]): string {
  return el(
    "section",
    { id: "contract" },
    `<h2>Contract</h2>${contracts.map(contractHtml).join("")}`,
  );
}

/** A `<select>` of options, the first one empty when `blank` names it. */
function select(
  name: string,
  values: readonly { value: string; label: string }[],
  blank: string | null,
): string {
  const options = (blank === null ? [] : [{ value: "", label: blank }])
    .concat(values)
    .map((o) => el("option", { value: o.value }, esc(o.label)))
    .join("");
  return el("select", { name }, options);
}

/** A labelled control. */
function labelled(label: string, control: string): string {
  return `<label><span class="label">${esc(label)}</span>${control}</label>`;
}

/** The outcome element of a form, with a shown outcome filled in. */
function output(action: string, shown: ShownOutcome | null): string {
  const text = shown !== null && shown.action === action
    ? `${shown.outcome}${shown.reason ? `: ${shown.reason}` : ""}`
    : "";
  return el(
    "output",
    {
      class: "outcome",
      "data-outcome": shown !== null && shown.action === action
        ? shown.outcome
        : null,
      "aria-live": "polite",
    },
    esc(text),
  );
}

/** The four action forms. */
function actionsSection(model: RunPageModel): string {
  const base = runPath(model.row.root, model.row.run);
  const prompts = model.prompts.map((p) => ({
    value: p.id,
    label: `${p.id}${p.name ? ` ${p.name}` : ""}`,
  }));
  const clauses = CLAUSES.map((c) => ({ value: c, label: c }));
  const shown = model.outcome;
  const form = (name: string, title: string, inner: string): string =>
    el(
      "form",
      {
        id: `${name}-form`,
        class: "action",
        method: "post",
        action: `${base}/${name}`,
        "data-action": name,
        novalidate: true,
      },
      `<h3>${esc(title)}</h3>${inner}<div class="submit">${
        el("button", { type: "submit" }, esc(title))
      }${output(name, shown)}</div>`,
    );
  const steer = form(
    "steer",
    "Steer",
    labelled(
      "text",
      `<textarea name="text" rows="3" aria-required="true"></textarea>`,
    ) +
      labelled("prompt", select("prompt", prompts, "the current prompt")),
  );
  const view = form(
    "view",
    "Change view",
    VIEW_KEYS.map((key) =>
      `<label><span class="label">${key} (now ${
        el("span", { "data-view-now": key }, esc(model.view[key]))
      })</span>${
        select(
          key,
          VIEW_OPTIONS[key].map((v) => ({ value: v, label: v })),
          "unchanged",
        )
      }</label>`
    ).join(""),
  );
  const amend = form(
    "amend",
    "Amend",
    labelled("prompt", select("prompt", prompts, null)) +
      labelled("clause", select("clause", clauses, null)) +
      labelled(
        "value (contains: PATH=TEXT)",
        `<input name="value" type="text">`,
      ) +
      labelled(
        "reason (required)",
        `<input name="reason" type="text" aria-required="true">`,
      ) +
      `<label class="check"><input name="persist" type="checkbox">also write it into the prompt file</label>`,
  );
  const relax = form(
    "relax",
    "Relax",
    labelled("prompt", select("prompt", prompts, null)) +
      labelled("clause", select("clause", clauses, null)) +
      labelled(
        "reason (required)",
        `<input name="reason" type="text" aria-required="true">`,
      ) +
      `<label class="check"><input name="confirm" type="checkbox">I confirm this weakens the contract</label>` +
      `<label class="check"><input name="persist" type="checkbox">also write it into the prompt file</label>`,
  );
  return `<section id="actions"><h2>Actions</h2>${steer}${view}${amend}${relax}</section>`;
}

/** The banner for the outcome of a form just posted without JavaScript. */
function outcomeBanner(shown: ShownOutcome | null): string {
  if (shown === null) return "";
  return el(
    "p",
    {
      id: "outcome",
      class: `banner outcome-${shown.outcome}`,
      "data-action": shown.action,
      "data-outcome": shown.outcome,
    },
    esc(
      `${shown.action}: ${shown.outcome}${
        shown.reason ? `: ${shown.reason}` : ""
      }`,
    ),
  );
}

/**
 * A run's page: the snapshot, the timeline, the event stream (continued
 * live by the page's script from `/run/{root}/{run}/events`), the control
 * log, the contract and the action forms.
 */
export function runPage(model: RunPageModel, context: PageContext): string {
  const row = model.row;
  const name = row.packet ?? row.target;
  const lastSeq = model.events.at(-1)?.seq ?? 0;
  return layout(
    `${name} ${row.run} — prompt_runner`,
    {
      "data-page": "run",
      "data-root": row.root,
      "data-run": row.run,
      "data-last-seq": lastSeq,
      // A run interrupted and resumed has a run_finished before its end.
      "data-finished": model.events.at(-1)?.type === "run_finished",
      "data-view": JSON.stringify(model.view),
    },
    header(
      context,
      ` / ${el("span", { class: "crumb" }, esc(`${name} · ${row.run}`))}`,
    ) +
      `<main class="run">${outcomeBanner(model.outcome)}` +
      `<div class="top">${snapshotPanel(model)}${
        timelineSection(model)
      }</div>` +
      `<div class="middle">${eventsSection(model)}${
        actionsSection(model)
      }</div>` +
      `<div class="bottom">${logSection(model.log)}${
        contractSection(model.contracts)
      }</div>` +
      `</main>`,
  );
}

/**
 * One prompt's contract as a page of its own
 * (`/run/{root}/{run}/contract/{prompt}`).
 */
export function contractPage(
  model: RunPageModel,
  promptId: string,
  context: PageContext,
): string {
  const view = model.contracts.find((c) => c.prompt_id === promptId);
  if (view === undefined) {
    return messagePage(
      "Not found",
      `No prompt "${promptId}" in this run's packet.`,
    );
  }
  const row = model.row;
  return layout(
    `contract ${promptId} — prompt_runner`,
    { "data-page": "contract", "data-root": row.root, "data-run": row.run },
    header(
      context,
      ` / ${
        el(
          "a",
          { href: runPath(row.root, row.run) },
          esc(`${row.packet ?? row.target} · ${row.run}`),
        )
      }`,
    ) +
      `<main>${
        el(
          "section",
          { id: "contract" },
          `<h2>Contract</h2>${contractHtml(view)}`,
        )
      }</main>`,
  );
}

/** A page that says what went wrong (404, bad request). */
export function messagePage(title: string, message: string): string {
  return layout(
    `${title} — prompt_runner`,
    { "data-page": "message" },
    header(null, "") +
      `<main><h1>${esc(title)}</h1>${
        el("p", { class: "message" }, esc(message))
      }` +
      `<p><a href="/">All runs</a></p></main>`,
  );
}
