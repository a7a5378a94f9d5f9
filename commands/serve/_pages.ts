/**
 * The dashboard's HTML pages: plain server-rendered HTML, every text from a
 * run, an agent, a packet or an operator escaped, no inline script or style
 * (the page's script and style sheet are `/static/app.js` and
 * `/static/app.css`; the script reads what it needs from `data-` attributes).
 *
 * @module
 */

import { el, esc, runPath } from "./_html.ts";
import type { PageContext, RunPageModel, RunRow } from "./_model.ts";
import { ROW_FIELDS, rowCells } from "./page/shared.ts";
import { actionsSection, outcomeBanner } from "./_action_forms.ts";
import {
  contractHtml,
  contractSection,
  eventsSection,
  logSection,
  snapshotPanel,
  timelineSection,
} from "./_run_panels.ts";

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
    {
      class: "run",
      "data-run": runKey(row),
      "data-status": row.status,
      "data-attention": row.attention?.reason ?? null,
    },
    el(
      "td",
      { "data-field": "name" },
      `${link} ${el("span", { class: "run-id" }, esc(row.run || "never run"))}`,
    ) +
      ROW_FIELDS.map((name) => cell(name, text[name], { class: classes[name] }))
        .join(""),
  );
}

/** The runs that need a person first, the rest in their order. */
function needsFirst(rows: RunRow[]): RunRow[] {
  return [
    ...rows.filter((row) => row.attention),
    ...rows.filter((row) => !row.attention),
  ];
}

/**
 * The runs page: one row per run, updated live from `/runs/stream` by the
 * page's script (`event: snapshot`, one `RunRow` each).
 */
export function runsPage(rows: RunRow[], context: PageContext): string {
  const head = ["run", ...ROW_FIELDS.map((field) => field.replace("-", " "))]
    .map((name) => `<th scope="col">${name}</th>`).join("");
  const empty = rows.length === 0
    ? `<p class="empty-note" id="no-runs">No runs yet: they appear here as they start.</p>`
    : "";
  // The fleet's address as every message shows it: its secrets masked.
  const fleet = context.fleet
    ? el(
      "p",
      { class: "fleet-note", id: "fleet" },
      `fleet: ${esc(context.fleet)}`,
    )
    : "";
  return layout(
    "prompt_runner runs",
    { "data-page": "runs" },
    header(context, "") +
      `<main><h1>Runs</h1>${fleet}${empty}` +
      `<table id="runs"><thead><tr>${head}</tr></thead><tbody>${
        needsFirst(rows).map(runRow).join("")
      }</tbody></table></main>`,
  );
}

export function runPage(model: RunPageModel, context: PageContext): string {
  const row = model.row;
  const name = row.packet ?? row.target;
  // A fleet run says where it runs: fleet:NODE/ROOT/RUN_ID.
  const where = row.target.startsWith("fleet:") ? row.target : row.run;
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
      ` / ${el("span", { class: "crumb" }, esc(`${name} · ${where}`))}`,
    ) +
      `<main class="run">${outcomeBanner(model.outcome)}` +
      `<div class="top">${snapshotPanel(model)}${
        timelineSection(model)
      }</div>` +
      `<div class="middle">${eventsSection(model)}${
        actionsSection(model)
      }</div>` +
      `<div class="bottom">${logSection(model.log, model.chain ?? null)}${
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
