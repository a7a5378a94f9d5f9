/**
 * The runs page: its rows, updated from `/runs/stream` (`event: snapshot`,
 * one row each), their ages ticking between updates.
 *
 * @module
 */

import { byData, node, setField } from "./dom.ts";
import {
  age,
  isNum,
  ROW_FIELDS,
  rowCells,
  type RowData,
  runPath,
} from "./shared.ts";

function buildRow(row: RowData): HTMLTableRowElement {
  const tr = node("tr", "run");
  tr.setAttribute("data-run", `${row.root}/${row.run}`);
  for (const field of ["name", ...ROW_FIELDS]) {
    const td = node("td");
    td.setAttribute("data-field", field);
    tr.appendChild(td);
  }
  return tr;
}

function fillName(tr: HTMLElement, row: RowData): void {
  const td = byData(tr, "td", "data-field", "name");
  if (!td) return;
  const name = row.packet || row.target;
  const href = row.run === "" ? null : runPath(row.root, row.run);
  const shown = td.firstElementChild;
  // Kept when it says the same: a reader may be about to click it.
  if (
    shown && shown.textContent === name &&
    shown.getAttribute("href") === href &&
    td.lastElementChild?.textContent === (row.run || "never run")
  ) {
    return;
  }
  td.textContent = "";
  let label: HTMLElement;
  if (row.run === "") {
    label = node("span", "run-name", name);
  } else {
    label = node("a", "run-link", name);
    label.setAttribute("href", href!);
  }
  td.appendChild(label);
  td.appendChild(document.createTextNode(" "));
  td.appendChild(node("span", "run-id", row.run || "never run"));
}

/**
 * Keeps the runs that need a person at the top: one that comes to need it
 * moves up, one that no longer does (or a new one that does not) goes
 * after them.
 */
function place(
  tbody: HTMLTableSectionElement,
  tr: Element,
  had: string | null,
  needs: string | null,
): void {
  if (needs) tr.setAttribute("data-attention", needs);
  else tr.removeAttribute("data-attention");
  if (needs && !had) {
    tbody.insertBefore(tr, tbody.firstChild);
    return;
  }
  if (!needs) {
    const flagged = [...tbody.querySelectorAll("tr.run[data-attention]")];
    const last = flagged.at(-1);
    if (last && tr.compareDocumentPosition(last) & 4) last.after(tr);
  }
}

function update(tbody: HTMLTableSectionElement, row: RowData): void {
  if (!row || typeof row.root !== "string" || typeof row.run !== "string") {
    return;
  }
  const key = `${row.root}/${row.run}`;
  let tr = byData(tbody, "tr.run", "data-run", key);
  if (!tr) {
    const never = byData(tbody, "tr.run", "data-run", `${row.root}/`);
    if (never && row.run !== "") never.remove();
    tr = buildRow(row);
    tbody.insertBefore(tr, tbody.firstChild);
    document.getElementById("no-runs")?.remove();
    place(tbody, tr, null, row.attention?.reason ?? null);
  } else {
    place(
      tbody,
      tr,
      tr.getAttribute("data-attention"),
      row.attention?.reason ?? null,
    );
  }
  tr.setAttribute("data-status", row.status);
  fillName(tr, row);
  const { text, classes } = rowCells(row);
  for (const field of ROW_FIELDS) {
    const cell = setField(tr, field, text[field]);
    const className = classes[field];
    if (cell && className !== undefined) cell.className = className;
  }
  const last = byData(tr, "[data-field]", "data-field", "last-event");
  if (last && isNum(row.last_event_age_ms)) {
    last.setAttribute(
      "data-since",
      String(Date.now() - row.last_event_age_ms),
    );
  }
}

/** Starts the runs page. */
export function runsPage(): void {
  const table = document.getElementById("runs") as HTMLTableElement | null;
  const tbody = table?.tBodies[0];
  if (!tbody) return;
  // Ages tick between updates.
  setInterval(() => {
    const list = tbody.querySelectorAll<HTMLElement>(
      "[data-field=last-event][data-since]",
    );
    for (const el of list) {
      el.textContent = age(Date.now() - Number(el.getAttribute("data-since")));
    }
  }, 1000);
  const source = new EventSource("/runs/stream");
  source.addEventListener("snapshot", (e) => {
    try {
      update(tbody, JSON.parse((e as MessageEvent<string>).data));
    } catch (_) {
      // Not a row.
    }
  });
}
