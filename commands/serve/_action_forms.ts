/**
 * A run page's action forms (steer, view, amend, relax): real `<form
 * method="post">`s with named fields that work without JavaScript, and the
 * banner that shows a request's outcome after a post without it.
 *
 * @module
 */

import { CLAUSES, VIEW_OPTIONS } from "../../mod.ts";
import { el, esc, runPath } from "./_html.ts";
import type { RunPageModel, ShownOutcome } from "./_model.ts";
import { VIEW_KEYS } from "./page/shared.ts";

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
export function actionsSection(model: RunPageModel): string {
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
export function outcomeBanner(shown: ShownOutcome | null): string {
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
