/**
 * A run's page: its one stream (`/events/rendered`: each event rendered in
 * the page's view, its seq the SSE id, so the browser resumes after the
 * last one), its snapshot and control log, the timeline and the forms.
 *
 * @module
 */

import { setField } from "./dom.ts";
import { EventList, type ShownItem } from "./run_events.ts";
import { Forms } from "./run_forms.ts";
import { LogPanel, Timeline } from "./run_timeline.ts";
import {
  attempt,
  attentionLine,
  budgetWords,
  cost,
  duration,
  isNum,
  type LogData,
  promptText,
  runPath,
  seg,
  tokens,
  UNKNOWN,
  VIEW_KEYS,
  type ViewData,
  viewText,
  words,
} from "./shared.ts";

/** How long a finished run's stream stays open for its last snapshot. */
const FINAL_SNAPSHOT_WAIT_MS = 5_000;

/** A snapshot as the page reads it (any field may be missing). */
interface SnapshotData {
  run_id?: string;
  status?: string;
  prompt_id?: string | null;
  prompt_name?: string | null;
  attempt?: number | null;
  mode?: string | null;
  view?: ViewData;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost_usd?: number | null;
  steer_count?: number;
  max_steers?: number;
  elapsed_ms?: number | null;
  provider?: string | null;
  model?: string | null;
  last_seq?: number;
  attention?: { reason?: string } | null;
  budget?: unknown;
}

function sameView(a: ViewData | null, b: ViewData | null): boolean {
  if (!a || !b) return false;
  return VIEW_KEYS.every((key) => a[key] === b[key]);
}

function parsed(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch (_) {
    return null;
  }
}

/** Starts a run's page. */
export function runPage(): void {
  const body = document.body;
  const run = body.getAttribute("data-run") ?? "";
  const base = runPath(body.getAttribute("data-root") ?? "", run);
  const list = new EventList(document.getElementById("events")!, base);
  const timeline = new Timeline(document.getElementById("timeline"));
  const panel = document.getElementById("snapshot")!;
  const log = new LogPanel(document.getElementById("log"));
  const forms = new Forms(log.box);
  let source: EventSource | null = null;
  let currentView = parsed(body.getAttribute("data-view") ?? "null") as
    | ViewData
    | null;
  // Only the last one ends the run: an interrupted run that was resumed
  // goes on after its run_finished.
  let finished = false;
  let finishedSeq = 0;
  for (const [seq, type] of list.shownTypes().sort((a, b) => a[0] - b[0])) {
    finished = type === "run_finished";
    if (finished) finishedSeq = seq;
  }

  const updateSnapshot = (s: SnapshotData): void => {
    if (!s || typeof s !== "object") return;
    if (s.run_id && s.run_id !== run) return;
    panel.setAttribute("data-status", String(s.status));
    setField(panel, "status", words(s.status));
    setField(panel, "prompt", promptText(s.prompt_id, s.prompt_name));
    setField(panel, "attempt", attempt(s.attempt, s.mode));
    setField(panel, "view", viewText(s.view));
    setField(panel, "tokens", tokens(s.input_tokens, s.output_tokens));
    setField(panel, "cost", cost(s.cost_usd));
    setField(panel, "budget", budgetWords(s.budget));
    const attention = setField(panel, "attention", attentionLine(s.attention));
    attention?.setAttribute("data-attention", s.attention?.reason ?? "");
    setField(
      panel,
      "steers",
      isNum(s.steer_count) ? `${s.steer_count} of ${s.max_steers}` : UNKNOWN,
    );
    setField(panel, "elapsed", duration(s.elapsed_ms));
    setField(
      panel,
      "model",
      `${s.provider || UNKNOWN}/${s.model || UNKNOWN}`,
    );
    setField(panel, "events", isNum(s.last_seq) ? String(s.last_seq) : UNKNOWN);
    if (s.view && !sameView(s.view, currentView)) {
      currentView = s.view;
      body.setAttribute("data-view", JSON.stringify(s.view));
      for (const el of document.querySelectorAll("[data-view-now]")) {
        const key = el.getAttribute("data-view-now") as keyof ViewData;
        if (typeof s.view[key] === "string") el.textContent = s.view[key];
      }
      // A view change renders every event shown again, the new way: the
      // stream starts again at the first one shown, in the new view.
      if (list.first !== null && !finished) connect(list.first - 1);
    }
  };

  const addLog = (entry: LogData): void => {
    if (!log.add(entry)) return;
    forms.decided(entry.request_id, entry.outcome, entry.reason);
    // Amendments are not events: the log tells of this run's new ones.
    if (
      (entry.command === "amend" || entry.command === "relax") &&
      entry.run_id === run
    ) {
      timeline.amendment(entry);
    }
  };

  const onEvent = (own: EventSource, e: MessageEvent<string>): void => {
    const item = parsed(e.data) as ShownItem | null;
    if (!item || typeof item !== "object") return;
    const seq = Number(e.lastEventId) || Number(item.seq);
    list.take(item);
    const ev = item.event ?? null;
    if (ev) timeline.fold(ev);
    else timeline.pass(seq);
    if (finished && isNum(seq) && seq > finishedSeq) {
      // The interrupted run was resumed: it goes on.
      finished = false;
      body.removeAttribute("data-finished");
    }
    if (ev && ev.type === "run_finished") {
      finished = true;
      finishedSeq = seq;
      const status = ev.data?.status;
      // An interrupted run's stream may go on (run --resume): the server
      // ends it when nothing follows. Any other end is final, once the
      // run's last snapshot (written just after) has come: the server sends
      // it, then ends the stream; a page closes it itself if it does not.
      if (status !== "interrupted") {
        setTimeout(() => own.close(), FINAL_SNAPSHOT_WAIT_MS);
      }
      body.setAttribute("data-finished", "");
      // The snapshot that says so may come after: the event says it first.
      if (typeof status === "string") {
        panel.setAttribute("data-status", status);
        setField(panel, "status", words(status));
      }
    }
  };

  const viewQuery = (): string =>
    VIEW_KEYS.filter((key) => key !== "log_mode" && currentView?.[key])
      .map((key) => `${key}=${seg(currentView![key])}`).join("&");

  function connect(after: number): void {
    if (finished) return;
    if (source !== null) source.close();
    const own = new EventSource(
      base + "/events/rendered?" + viewQuery() + "&after=" + after,
    );
    source = own;
    own.onmessage = (e) => onEvent(own, e);
    own.addEventListener("snapshot", (e) => {
      updateSnapshot(parsed((e as MessageEvent<string>).data) as SnapshotData);
    });
    own.addEventListener("log", (e) => {
      addLog(parsed((e as MessageEvent<string>).data) as LogData);
    });
    own.onerror = () => {
      // The server ended the stream at the run's end: stay closed.
      if (finished) {
        own.close();
        return;
      }
      // The browser reconnects by itself (with Last-Event-ID) unless the
      // server refused; then try again a little later from what we have.
      if (own.readyState === EventSource.CLOSED && source === own) {
        setTimeout(() => {
          if (source === own) connect(list.latest);
        }, 1000);
      }
    };
  }

  connect(list.latest);
}
