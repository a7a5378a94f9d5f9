/**
 * A run page's forms, sent with `fetch` (they work without it too), their
 * outcome written beside them, and a pending request's outcome filled in
 * when the control log tells it.
 *
 * @module
 */

import { byData } from "./dom.ts";
import { VIEW_KEYS } from "./shared.ts";

/** Writes an outcome into a form's `output`. */
function show(
  out: Element | null,
  outcome: unknown,
  reason: unknown,
): void {
  if (!out) return;
  let text = String(outcome);
  if (reason && (outcome === "rejected" || outcome === "refused")) {
    text += `: ${String(reason)}`;
  }
  out.textContent = text;
  out.setAttribute("data-outcome", String(outcome));
}

/** Why the page will not send a form, or `null`. */
function refuse(form: HTMLFormElement): string | null {
  const data = new FormData(form);
  const get = (k: string): string => {
    const v = data.get(k);
    return typeof v === "string" ? v.trim() : "";
  };
  const action = form.getAttribute("data-action");
  if (action === "steer" && get("text") === "") {
    return "the steer text is empty";
  }
  if (action === "view" && !VIEW_KEYS.some((k) => get(k) !== "")) {
    return "choose at least one view setting";
  }
  if ((action === "amend" || action === "relax") && get("reason") === "") {
    return "a reason is required";
  }
  if (action === "amend" && get("value") === "") return "a value is required";
  if (action === "relax" && data.get("confirm") !== "on") {
    return "confirm that this weakens the contract";
  }
  return null;
}

interface Answer {
  outcome?: unknown;
  reason?: unknown;
  request_id?: unknown;
}

/** The page's forms, and the requests they wait on. */
export class Forms {
  readonly #pending = new Map<string, Element | null>();
  readonly #log: HTMLElement | null;

  /** Wires every `form.action` of the page; `log` is its control log. */
  constructor(log: HTMLElement | null) {
    this.#log = log;
    for (
      const form of document.querySelectorAll<HTMLFormElement>("form.action")
    ) {
      form.addEventListener("submit", (e) => this.#submit(e, form));
    }
  }

  /** A request was decided: its form shows how. */
  decided(id: unknown, outcome: unknown, reason: unknown): void {
    if (typeof id !== "string" || !this.#pending.has(id)) return;
    if (outcome !== "applied" && outcome !== "rejected") return;
    show(this.#pending.get(id)!, outcome, reason);
    this.#pending.delete(id);
  }

  #submit(e: Event, form: HTMLFormElement): void {
    e.preventDefault();
    const out = form.querySelector("output.outcome");
    const problem = refuse(form);
    if (problem !== null) {
      show(out, "refused", problem);
      return;
    }
    const params = new URLSearchParams();
    new FormData(form).forEach((value, key) => {
      if (typeof value === "string") params.append(key, value);
    });
    show(out, "sending", null);
    fetch(form.getAttribute("action") ?? "", {
      method: "POST",
      headers: {
        Accept: "application/json",
        "Content-Type": "application/x-www-form-urlencoded;charset=UTF-8",
      },
      body: params.toString(),
      credentials: "same-origin",
    }).then((res) =>
      res.json().catch(() => ({
        outcome: "refused",
        reason: `HTTP ${res.status}`,
      }))
    ).then((answer: Answer) => {
      show(out, answer.outcome, answer.reason);
      const id = answer.request_id;
      if (
        typeof id === "string" && id &&
        answer.outcome !== "applied" && answer.outcome !== "rejected"
      ) {
        this.#pending.set(id, out);
        const log = this.#log;
        const done = log &&
          (byData(
            log,
            ".log-entry[data-outcome=applied]",
            "data-request",
            id,
          ) ||
            byData(
              log,
              ".log-entry[data-outcome=rejected]",
              "data-request",
              id,
            ));
        if (done) this.decided(id, done.getAttribute("data-outcome"), null);
      }
    }, (error: Error) => {
      show(out, "refused", `cannot reach the dashboard: ${error.message}`);
    });
  }
}
