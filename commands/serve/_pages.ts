/**
 * The dashboard's HTML pages. STUB: the pages helper replaces this file
 * (same exports, same signatures).
 *
 * @module
 */

import type { PageContext, RunPageModel, RunRow } from "./_model.ts";

/** The runs page: one row per run, updated live. */
export function runsPage(rows: RunRow[], _context: PageContext): string {
  return `<!doctype html><title>runs</title><table id="runs">${
    rows.map(() => "<tr class=run></tr>").join("")
  }</table>`;
}

/** A run's page. */
export function runPage(model: RunPageModel, _context: PageContext): string {
  return `<!doctype html><title>run</title><p>${model.events.length}</p>`;
}

/** A page that says what went wrong (404, bad request). */
export function messagePage(title: string, _message: string): string {
  return `<!doctype html><title>${title}</title>`;
}
