/**
 * The dashboard's hand-written script and style sheet, served as
 * `/static/app.js` and `/static/app.css`. The script builds every node from
 * data with `textContent` (never `innerHTML`), reads the run it shows from
 * `data-` attributes on `<body>`, and needs no inline script or style (the
 * pages are served under `script-src 'self'; style-src 'self'`).
 *
 * @module
 */

/** `/static/app.js`. */
export const APP_JS: string = String.raw`"use strict";
(function () {
  var body = document.body;
  var UNKNOWN = "\u2014";
  // The list is trimmed and scrolled at most once a frame.
  var FRAME_MS = 16;
  // A page following a long run keeps its newest events; older ones come
  // back on request. Layout and paint cost grows with every node kept.
  var MAX_SHOWN = 1000;
  var EARLIER_STEP = 200;
  // Events sit in blocks of CHUNK: a new one touches its own block, not a
  // list of a thousand (each frame's layout and paint walk stays short).
  var CHUNK = 50;

  function enc(value) { return encodeURIComponent(value); }
  function runPath(root, run) { return "/run/" + enc(root) + "/" + enc(run); }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function duration(ms) {
    if (!isNum(ms) || ms < 0) return UNKNOWN;
    if (ms < 1000) return Math.round(ms) + " ms";
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + "m" + pad(s % 60) + "s";
    return Math.floor(m / 60) + "h" + pad(m % 60) + "m";
  }
  function count(v) {
    if (!isNum(v)) return UNKNOWN;
    if (v < 1000) return String(v);
    if (v < 1000000) return (v / 1000).toFixed(1) + "k";
    return (v / 1000000).toFixed(1) + "M";
  }
  function tokens(i, o) {
    if (!isNum(i) && !isNum(o)) return UNKNOWN;
    return count(i) + " in \u00b7 " + count(o) + " out";
  }
  function cost(usd) {
    if (!isNum(usd)) return UNKNOWN;
    return "$" + usd.toFixed(usd < 1 ? 4 : 2);
  }
  function attempt(n, mode, detail) {
    if (!isNum(n)) return UNKNOWN;
    return "#" + n + (mode ? " " + mode : "") + (detail ? " (" + detail + ")" : "");
  }
  function progress(c, s) {
    if (!isNum(c) && !isNum(s)) return UNKNOWN;
    return (isNum(c) ? c : "?") + "/" + (isNum(s) ? s : "?");
  }
  function age(ms) { return isNum(ms) ? duration(ms) + " ago" : UNKNOWN; }
  function words(text) { return String(text == null ? "" : text).replace(/_/g, " "); }
  function promptText(id, name) {
    return id == null ? UNKNOWN : id + (name ? " " + name : "");
  }
  function viewText(v) {
    if (!v) return UNKNOWN;
    return v.log_mode + " \u00b7 tools " + v.tool_output + " \u00b7 thinking " +
      v.thinking + " \u00b7 diff " + v.diff;
  }
  function node(tag, className, text) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    if (text != null) el.textContent = String(text);
    return el;
  }
  function byData(parent, selector, key, value) {
    var list = parent.querySelectorAll(selector);
    for (var i = 0; i < list.length; i++) {
      if (list[i].getAttribute(key) === String(value)) return list[i];
    }
    return null;
  }
  function setField(parent, name, text) {
    var el = byData(parent, "[data-field]", "data-field", name);
    if (el) el.textContent = text;
    return el;
  }

  // The runs page.
  function runsPage() {
    var table = document.getElementById("runs");
    if (!table) return;
    var tbody = table.tBodies[0];
    var CELLS = ["name", "target", "status", "progress", "prompt", "attempt",
      "elapsed", "tokens", "cost", "last-event", "runner"];
    function buildRow(row) {
      var tr = node("tr", "run");
      tr.setAttribute("data-run", row.root + "/" + row.run);
      for (var i = 0; i < CELLS.length; i++) {
        var td = node("td");
        td.setAttribute("data-field", CELLS[i]);
        tr.appendChild(td);
      }
      return tr;
    }
    function fillName(tr, row) {
      var td = byData(tr, "td", "data-field", "name");
      var name = row.packet || row.target;
      td.textContent = "";
      var label;
      if (row.run === "") {
        label = node("span", "run-name", name);
      } else {
        label = node("a", "run-link", name);
        label.setAttribute("href", runPath(row.root, row.run));
      }
      td.appendChild(label);
      td.appendChild(document.createTextNode(" "));
      td.appendChild(node("span", "run-id", row.run || "never run"));
    }
    function update(row) {
      if (!row || typeof row.root !== "string" || typeof row.run !== "string") return;
      var key = row.root + "/" + row.run;
      var tr = byData(tbody, "tr.run", "data-run", key);
      if (!tr) {
        var never = byData(tbody, "tr.run", "data-run", row.root + "/");
        if (never && row.run !== "") never.remove();
        tr = buildRow(row);
        tbody.insertBefore(tr, tbody.firstChild);
        var note = document.getElementById("no-runs");
        if (note) note.remove();
      }
      tr.setAttribute("data-status", row.status);
      fillName(tr, row);
      setField(tr, "target", row.target);
      setField(tr, "status", words(row.status)).className = "status status-" + row.status;
      setField(tr, "progress", progress(row.progress && row.progress.completed,
        row.progress && row.progress.selected));
      setField(tr, "prompt", promptText(row.current && row.current.id, row.current && row.current.name));
      setField(tr, "attempt", attempt(row.attempt && row.attempt.number,
        row.attempt && row.attempt.mode, row.attempt && row.attempt.detail));
      setField(tr, "elapsed", duration(row.elapsed_ms));
      setField(tr, "tokens", tokens(row.input_tokens, row.output_tokens));
      setField(tr, "cost", cost(row.cost_usd));
      var last = setField(tr, "last-event", age(row.last_event_age_ms));
      if (last && isNum(row.last_event_age_ms)) {
        last.setAttribute("data-since", String(Date.now() - row.last_event_age_ms));
      }
      setField(tr, "runner", words(row.runner)).className = "runner runner-" + row.runner;
    }
    // Ages tick between updates.
    setInterval(function () {
      var list = tbody.querySelectorAll("[data-field=last-event][data-since]");
      for (var i = 0; i < list.length; i++) {
        list[i].textContent = age(Date.now() - Number(list[i].getAttribute("data-since")));
      }
    }, 1000);
    var source = new EventSource("/runs/stream");
    source.addEventListener("snapshot", function (e) {
      try { update(JSON.parse(e.data)); } catch (_) { /* not a row */ }
    });
  }

  // A run's page.
  function runPage() {
    var root = body.getAttribute("data-root");
    var run = body.getAttribute("data-run");
    var base = runPath(root, run);
    var events = document.getElementById("events");
    var timeline = document.getElementById("timeline");
    var snapshotPanel = document.getElementById("snapshot");
    var logPanel = document.getElementById("log");
    var seen = {};
    var rendered = 0;
    var latest = 0;
    var first = null;
    var source = null;
    var finished = false;
    var finishedSeq = 0;
    var stick = true;
    var currentView = null;
    var timelineSeq = Number(timeline && timeline.getAttribute("data-seq")) || 0;
    var pending = {};
    var logged = {};
    var shownCount = 0;

    try { currentView = JSON.parse(body.getAttribute("data-view") || "null"); } catch (_) { currentView = null; }
    var shown = events.querySelectorAll(".event[data-seq]");
    for (var i = 0; i < shown.length; i++) {
      if (i % CHUNK === 0) events.appendChild(node("div", "chunk"));
      events.lastChild.appendChild(shown[i]);
      var s = Number(shown[i].getAttribute("data-seq"));
      seen[s] = shown[i];
      shownCount++;
      if (first === null || s < first) first = s;
      if (s > rendered) rendered = s;
      // Only the last one ends the run: an interrupted run that was resumed
      // goes on after its run_finished.
      finished = shown[i].getAttribute("data-type") === "run_finished";
      if (finished) finishedSeq = s;
    }
    latest = rendered;
    var entries = logPanel ? logPanel.querySelectorAll(".log-entry") : [];
    for (var j = 0; j < entries.length; j++) logged[logKey(entries[j])] = true;

    function atBottom() {
      return events.scrollHeight - events.scrollTop - events.clientHeight < 40;
    }
    events.addEventListener("scroll", function () { stick = atBottom(); });
    function scrollDown() { if (stick) events.scrollTop = events.scrollHeight; }
    scrollDown();

    function fill(el, item) {
      var lines = Array.isArray(item.lines) ? item.lines : [];
      el.className = lines.length === 0 ? "event empty" : "event";
      var pre = el.firstChild;
      if (!pre) { pre = node("pre"); el.appendChild(pre); }
      pre.textContent = lines.join("\n");
    }
    function insert(item) {
      var seq = Number(item.seq);
      if (!isNum(seq) || seen[seq]) return;
      var el = node("div", "event");
      el.setAttribute("data-seq", String(seq));
      el.setAttribute("data-type", String(item.type));
      fill(el, item);
      var after = null;
      for (var k = seq + 1; k <= latest; k++) { if (seen[k]) { after = seen[k]; break; } }
      if (after) {
        after.parentNode.insertBefore(el, after);
      } else {
        var chunk = events.lastElementChild;
        if (!chunk || chunk.className !== "chunk" || chunk.childElementCount >= CHUNK) {
          chunk = events.appendChild(node("div", "chunk"));
        }
        chunk.appendChild(el);
      }
      seen[seq] = el;
      shownCount++;
      if (first === null || seq < first) first = seq;
    }
    // Following the newest events: the oldest beyond MAX_SHOWN leave the
    // page (never while the reader is scrolled up in them).
    function trim() {
      if (!stick || first === null || shownCount <= MAX_SHOWN) return;
      while (shownCount > MAX_SHOWN && first < rendered) {
        var el = seen[first];
        if (el) {
          var parent = el.parentNode;
          el.remove();
          if (parent !== events && parent.childElementCount === 0) parent.remove();
          delete seen[first];
          shownCount--;
        }
        first++;
      }
      earlierNote();
    }
    // "N earlier events not shown", with a button that brings some back.
    function earlierNote() {
      var note = events.querySelector(".earlier");
      var hidden = first === null ? 0 : first - 1;
      if (hidden <= 0) { if (note) note.remove(); return; }
      if (!note) {
        note = node("p", "earlier");
        events.insertBefore(note, events.firstChild);
      }
      note.setAttribute("data-earlier", String(hidden));
      note.textContent = hidden + " earlier event" + (hidden === 1 ? "" : "s") + " not shown ";
      var more = node("button", "show-earlier", "show " + Math.min(EARLIER_STEP, hidden) + " earlier");
      more.setAttribute("type", "button");
      more.addEventListener("click", showEarlier);
      note.appendChild(more);
    }
    var loadingEarlier = false;
    function showEarlier() {
      if (loadingEarlier || first === null || first <= 1) return;
      loadingEarlier = true;
      stick = false;
      var to = first - 1;
      var from = Math.max(1, first - EARLIER_STEP);
      rendering(from, to).then(function (list) {
        var height = events.scrollHeight;
        if (Array.isArray(list)) list.forEach(insert);
        // Keep what the reader was looking at in place.
        events.scrollTop += events.scrollHeight - height;
        earlierNote();
        loadingEarlier = false;
      }, function () { loadingEarlier = false; });
    }
    earlierNote();
    function rendering(from, to) {
      return fetch(base + "/rendered?from=" + from + "&to=" + to, {
        headers: { Accept: "application/json" },
        credentials: "same-origin",
      }).then(function (res) {
        if (!res.ok) throw new Error("HTTP " + res.status);
        return res.json();
      });
    }
    // Trimming and scrolling once a frame, however many events came in it.
    var tidying = null;
    function tidy() {
      if (tidying !== null) return;
      var wasAtBottom = stick;
      tidying = setTimeout(function () {
        tidying = null;
        stick = wasAtBottom || stick;
        trim();
        scrollDown();
      }, FRAME_MS);
    }
    // One rendered event from the stream: shown, or shown again the new way.
    function take(item) {
      var seq = Number(item.seq);
      if (!isNum(seq)) return;
      if (seen[seq]) fill(seen[seq], item);
      else if (first === null || seq >= first) insert(item);
      while (seen[rendered + 1]) rendered++;
      if (seq > latest) latest = seq;
      tidy();
    }
    // A view change renders every event shown again, the new way: the
    // stream starts again at the first one shown, in the new view.
    function rerender() {
      if (first === null || finished) return;
      connect(first - 1);
    }
    function sameView(a, b) {
      if (!a || !b) return false;
      return a.log_mode === b.log_mode && a.tool_output === b.tool_output &&
        a.thinking === b.thinking && a.diff === b.diff;
    }
    function updateSnapshot(s) {
      if (!s || typeof s !== "object") return;
      if (s.run_id && s.run_id !== run) return;
      snapshotPanel.setAttribute("data-status", s.status);
      setField(snapshotPanel, "status", words(s.status));
      setField(snapshotPanel, "prompt", promptText(s.prompt_id, s.prompt_name));
      setField(snapshotPanel, "attempt", attempt(s.attempt, s.mode));
      setField(snapshotPanel, "view", viewText(s.view));
      setField(snapshotPanel, "tokens", tokens(s.input_tokens, s.output_tokens));
      setField(snapshotPanel, "cost", cost(s.cost_usd));
      setField(snapshotPanel, "steers", isNum(s.steer_count) ? s.steer_count + " of " + s.max_steers : UNKNOWN);
      setField(snapshotPanel, "elapsed", duration(s.elapsed_ms));
      setField(snapshotPanel, "model", (s.provider || UNKNOWN) + "/" + (s.model || UNKNOWN));
      setField(snapshotPanel, "events", isNum(s.last_seq) ? String(s.last_seq) : UNKNOWN);
      if (s.view && !sameView(s.view, currentView)) {
        currentView = s.view;
        body.setAttribute("data-view", JSON.stringify(s.view));
        var now = document.querySelectorAll("[data-view-now]");
        for (var n = 0; n < now.length; n++) {
          var key = now[n].getAttribute("data-view-now");
          if (typeof s.view[key] === "string") now[n].textContent = s.view[key];
        }
        rerender();
      }
    }

    function promptRow(id) {
      var row = byData(timeline, ".prompt", "data-prompt", id);
      if (row) return row;
      row = node("div", "prompt");
      row.setAttribute("data-prompt", id);
      row.appendChild(node("span", "prompt-name", id));
      row.appendChild(node("span", "segments"));
      timeline.appendChild(row);
      return row;
    }
    function setOutcome(span, outcome) {
      if (span) span.className = "attempt outcome-" + outcome;
    }
    // The events that change the timeline; the rest only move its seq on.
    var TIMELINE_TYPES = { prompt_started: 1, retry_scheduled: 1, prompt_completed: 1,
      prompt_failed: 1, prompt_steered: 1, run_finished: 1 };
    function fold(ev) {
      if (!timeline || !ev || !isNum(ev.seq) || ev.seq <= timelineSeq) return;
      timelineSeq = ev.seq;
      if (!TIMELINE_TYPES[ev.type]) return;
      timeline.setAttribute("data-seq", String(ev.seq));
      var running = timeline.querySelectorAll(".attempt.outcome-running");
      if (ev.type === "run_finished") {
        for (var r = 0; r < running.length; r++) setOutcome(running[r], "interrupted");
        return;
      }
      if (ev.prompt_id == null) return;
      var d = ev.data || {};
      var row = promptRow(ev.prompt_id);
      var segments = row.querySelector(".segments");
      var open = row.querySelector(".attempt.outcome-running");
      if (open) open.setAttribute("data-last", String(ev.seq));
      if (ev.type === "prompt_started") {
        setOutcome(open, d.mode === "retry" ? "retried" : d.mode === "repair" ? "repaired" : "interrupted");
        var span = node("span", "attempt outcome-running", (ev.attempt || d.attempt) + " " + (d.mode || "run"));
        span.setAttribute("data-attempt", String(ev.attempt || d.attempt));
        span.setAttribute("data-mode", String(d.mode || "run"));
        span.setAttribute("data-first", String(ev.seq));
        span.setAttribute("data-last", String(ev.seq));
        segments.appendChild(span);
      } else if (ev.type === "retry_scheduled") {
        setOutcome(open, "retried");
      } else if (ev.type === "prompt_completed") {
        setOutcome(open, "completed");
      } else if (ev.type === "prompt_failed") {
        setOutcome(open, d.status === "interrupted" ? "interrupted" : "failed");
      } else if (ev.type === "prompt_steered") {
        var mark = node("span", "mark steer", "\u00bb");
        mark.setAttribute("data-seq", String(ev.seq));
        mark.setAttribute("title", "steer at event " + ev.seq + ": " + (d.author || "unknown") + ": " + (d.text || ""));
        segments.appendChild(mark);
      }
    }

    function logKey(el) {
      return [el.getAttribute("data-at"), el.getAttribute("data-request"),
        el.getAttribute("data-command"), el.getAttribute("data-outcome")].join(" ");
    }
    function logText(entry) {
      var p = entry.params || {};
      var what = "";
      if (entry.command === "steer" && typeof p.text === "string") {
        what = " \u201c" + p.text + "\u201d";
      } else if (entry.command === "set_view") {
        what = Object.keys(p).map(function (k) { return " " + k + "=" + String(p[k]); }).join("");
      } else if (typeof p.clause === "string") {
        what = " " + p.clause;
      }
      return entry.at + " " + (entry.author || "unknown") + " " + entry.command + what +
        " \u2192 " + entry.outcome + (entry.reason ? ": " + entry.reason : "");
    }
    function addLog(entry) {
      if (!entry || typeof entry.outcome !== "string" || !logPanel) return;
      var el = node("div", "log-entry", logText(entry));
      el.setAttribute("data-request", entry.request_id || "");
      el.setAttribute("data-outcome", entry.outcome);
      el.setAttribute("data-command", String(entry.command));
      el.setAttribute("data-at", String(entry.at));
      var key = logKey(el);
      if (logged[key]) return;
      logged[key] = true;
      logPanel.appendChild(el);
      decided(entry.request_id, entry.outcome, entry.reason);
      // Amendments are not events: the log tells of this run's new ones.
      if ((entry.command === "amend" || entry.command === "relax") &&
        entry.run_id === run && entry.prompt_id != null && timeline) {
        var p = entry.params || {};
        var mark = node("span", "mark amendment", "\u00a7");
        mark.setAttribute("data-seq", String(timelineSeq));
        mark.setAttribute("title", "amendment at event " + timelineSeq + ": " +
          (entry.author || "unknown") + ": " + entry.command + " " + (p.clause || "") +
          " (" + (p.phase || "") + ") \u2014 " + (entry.reason || ""));
        promptRow(entry.prompt_id).querySelector(".segments").appendChild(mark);
      }
    }
    function decided(id, outcome, reason) {
      if (!id || !pending[id]) return;
      if (outcome !== "applied" && outcome !== "rejected") return;
      show(pending[id], outcome, reason);
      delete pending[id];
    }

    function viewQuery() {
      var v = currentView || {};
      var parts = [];
      ["tool_output", "thinking", "diff"].forEach(function (k) {
        if (typeof v[k] === "string") parts.push(k + "=" + enc(v[k]));
      });
      return parts.join("&");
    }
    // One stream: the run's events rendered in the page's view (each with
    // its seq as the SSE id, so the browser resumes after the last one),
    // its snapshot and its control log.
    function connect(after) {
      if (finished) return;
      if (source !== null) source.close();
      var own = new EventSource(base + "/events/rendered?" + viewQuery() +
        "&after=" + after);
      source = own;
      own.onmessage = function (e) {
        var item = null;
        try { item = JSON.parse(e.data); } catch (_) { item = null; }
        if (!item || typeof item !== "object") return;
        var seq = Number(e.lastEventId) || Number(item.seq);
        take(item);
        var ev = item.event || null;
        if (ev) fold(ev);
        else if (isNum(seq) && seq > timelineSeq) timelineSeq = seq;
        if (finished && isNum(seq) && seq > finishedSeq) {
          // The interrupted run was resumed: it goes on.
          finished = false;
          body.removeAttribute("data-finished");
        }
        if (ev && ev.type === "run_finished") {
          finished = true;
          finishedSeq = seq;
          // An interrupted run's stream may go on (run --resume): the
          // server ends it when nothing follows. Any other end is final.
          if (!ev.data || ev.data.status !== "interrupted") own.close();
          body.setAttribute("data-finished", "");
          // The snapshot that says so may come after: the event says it first.
          if (ev.data && typeof ev.data.status === "string") {
            snapshotPanel.setAttribute("data-status", ev.data.status);
            setField(snapshotPanel, "status", words(ev.data.status));
          }
        }
      };
      own.addEventListener("snapshot", function (e) {
        try { updateSnapshot(JSON.parse(e.data)); } catch (_) { /* not a snapshot */ }
      });
      own.addEventListener("log", function (e) {
        try { addLog(JSON.parse(e.data)); } catch (_) { /* not an entry */ }
      });
      own.onerror = function () {
        // The server ended the stream at the run's end: stay closed.
        if (finished) {
          own.close();
          return;
        }
        // The browser reconnects by itself (with Last-Event-ID) unless the
        // server refused; then try again a little later from what we have.
        if (own.readyState === EventSource.CLOSED && source === own) {
          setTimeout(function () { if (source === own) connect(latest); }, 1000);
        }
      };
    }

    // The forms: sent with fetch, their outcome written beside them.
    function show(out, outcome, reason) {
      if (!out) return;
      var text = String(outcome);
      if (reason && (outcome === "rejected" || outcome === "refused")) text += ": " + reason;
      out.textContent = text;
      out.setAttribute("data-outcome", String(outcome));
    }
    function refuse(form) {
      var data = new FormData(form);
      var get = function (k) { var v = data.get(k); return typeof v === "string" ? v.trim() : ""; };
      var action = form.getAttribute("data-action");
      if (action === "steer" && get("text") === "") return "the steer text is empty";
      if (action === "view" && !["log_mode", "tool_output", "thinking", "diff"].some(function (k) { return get(k) !== ""; })) {
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
    var forms = document.querySelectorAll("form.action");
    Array.prototype.forEach.call(forms, function (form) {
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        var out = form.querySelector("output.outcome");
        var problem = refuse(form);
        if (problem !== null) { show(out, "refused", problem); return; }
        var params = new URLSearchParams();
        new FormData(form).forEach(function (value, key) {
          if (typeof value === "string") params.append(key, value);
        });
        show(out, "sending", null);
        fetch(form.getAttribute("action"), {
          method: "POST",
          headers: {
            Accept: "application/json",
            "Content-Type": "application/x-www-form-urlencoded;charset=UTF-8",
          },
          body: params.toString(),
          credentials: "same-origin",
        }).then(function (res) {
          return res.json().catch(function () {
            return { outcome: "refused", reason: "HTTP " + res.status };
          });
        }).then(function (answer) {
          show(out, answer.outcome, answer.reason);
          var id = answer.request_id;
          if (id && answer.outcome !== "applied" && answer.outcome !== "rejected") {
            pending[id] = out;
            var done = logPanel && (byData(logPanel, ".log-entry[data-outcome=applied]", "data-request", id) ||
              byData(logPanel, ".log-entry[data-outcome=rejected]", "data-request", id));
            if (done) decided(id, done.getAttribute("data-outcome"), null);
          }
        }, function (error) {
          show(out, "refused", "cannot reach the dashboard: " + error.message);
        });
      });
    });

    connect(latest);
  }

  var page = body.getAttribute("data-page");
  if (page === "runs") runsPage();
  if (page === "run") runPage();
})();
`;

/** `/static/app.css`. */
export const APP_CSS: string = `:root {
  --ink: #1d2126;
  --muted: #5d6670;
  --line: #d5d9de;
  --paper: #fbfbfa;
  --panel: #ffffff;
  --link: #1f5fa8;
  --completed: #2e7d32;
  --retried: #c77700;
  --repaired: #6a3fb0;
  --failed: #c62828;
  --interrupted: #78828c;
  --running: #1f6fd1;
  --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "Liberation Mono", monospace;
}
* { box-sizing: border-box; }
html { background: var(--paper); color: var(--ink); }
body {
  margin: 0;
  font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif;
}
a { color: var(--link); }
header {
  display: flex; gap: .5rem; align-items: baseline;
  padding: .5rem 1rem; border-bottom: 1px solid var(--line); background: var(--panel);
}
header .home { font-weight: 600; text-decoration: none; }
header .author { margin-left: auto; color: var(--muted); }
main { padding: .75rem 1rem; }
h1 { font-size: 1.3rem; margin: .25rem 0 .75rem; }
h2 { font-size: 1rem; margin: 0 0 .5rem; }
h3 { font-size: .95rem; margin: .5rem 0 .25rem; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 4px; padding: .5rem .75rem; margin-bottom: .75rem; }
section section { border: 0; padding: 0; margin: 0; }
.empty-note, .earlier, .message { color: var(--muted); }

table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: .85rem; }
#runs td[data-field] { white-space: nowrap; }
#runs .run-id, #runs .target { color: var(--muted); font-family: var(--mono); font-size: .85rem; }
.status-running { color: var(--running); font-weight: 600; }
.status-completed { color: var(--completed); }
.status-failed, .status-runner_gone { color: var(--failed); }
.status-interrupted { color: var(--interrupted); }
.runner-gone { color: var(--failed); }
.runner-alive { color: var(--completed); }

.run .top, .run .middle, .run .bottom { display: grid; gap: .75rem; }
@media (min-width: 1000px) {
  .run .top { grid-template-columns: minmax(280px, 1fr) 2fr; }
  .run .middle { grid-template-columns: 2fr minmax(300px, 1fr); }
  .run .bottom { grid-template-columns: 1fr 1fr; }
}
#snapshot dl { margin: 0; display: grid; grid-template-columns: 1fr 1fr; gap: .25rem .75rem; }
#snapshot .field { display: flex; gap: .5rem; }
#snapshot dt { color: var(--muted); min-width: 5rem; }
#snapshot dd { margin: 0; font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }

#timeline .legend { display: flex; flex-wrap: wrap; gap: .75rem; color: var(--muted); font-size: .8rem; margin-bottom: .5rem; }
.legend-item { display: inline-flex; align-items: center; gap: .25rem; }
.swatch { display: inline-block; width: .9rem; height: .9rem; border-radius: 2px; }
#timeline .prompt { display: flex; align-items: center; gap: .5rem; padding: .2rem 0; border-top: 1px solid var(--line); }
#timeline .prompt-name { min-width: 10rem; font-family: var(--mono); font-size: .85rem; overflow-wrap: anywhere; }
#timeline .segments { display: flex; flex-wrap: wrap; gap: 2px; align-items: center; }
.attempt { display: inline-block; min-width: 4.5rem; padding: .1rem .4rem; color: #fff; border-radius: 2px; font-size: .8rem; }
.outcome-completed { background: var(--completed); }
.outcome-retried { background: var(--retried); }
.outcome-repaired { background: var(--repaired); }
.outcome-failed { background: var(--failed); }
.outcome-interrupted { background: var(--interrupted); }
.outcome-running { background: var(--running); }
.mark { display: inline-block; padding: 0 .2rem; font-weight: 700; font-size: .9rem; }
.mark.steer { color: var(--retried); }
.mark.amendment { color: var(--repaired); }

#events {
  height: 60vh; overflow: auto; background: #f4f5f6 local; border: 1px solid var(--line);
  padding: .25rem .5rem; font-family: var(--mono); font-size: 12.5px;
  contain: strict; overflow-anchor: none; will-change: scroll-position;
}
#events .chunk { contain: layout style; }
#events .show-earlier { margin-left: .5rem; font: inherit; font-size: .8rem; }
#events .event pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; font: inherit; }
#events .event.empty { display: none; }
#events .event[data-type=prompt_started] pre { font-weight: 700; }
#events .event[data-type=run_finished] pre { font-weight: 700; }

#actions form { border-top: 1px solid var(--line); padding: .25rem 0 .5rem; }
#actions label { display: block; margin: .25rem 0; }
#actions .label { display: block; color: var(--muted); font-size: .8rem; }
#actions label.check { display: flex; gap: .4rem; align-items: center; }
#actions textarea, #actions input[type=text], #actions select { width: 100%; font: inherit; padding: .2rem .3rem; }
#actions .submit { display: flex; gap: .75rem; align-items: center; margin-top: .3rem; }
output.outcome { font-family: var(--mono); font-size: .85rem; }
output.outcome[data-outcome=applied], output.outcome[data-outcome=recorded] { color: var(--completed); }
output.outcome[data-outcome=accepted], output.outcome[data-outcome=sending] { color: var(--running); }
output.outcome[data-outcome=rejected], output.outcome[data-outcome=refused] { color: var(--failed); }
.banner { padding: .4rem .75rem; border: 1px solid var(--line); border-radius: 4px; background: var(--panel); }
.banner.outcome-applied, .banner.outcome-recorded { border-color: var(--completed); background: #fff; color: var(--completed); }
.banner.outcome-rejected, .banner.outcome-refused { border-color: var(--failed); background: #fff; color: var(--failed); }
.banner.outcome-accepted, .banner.outcome-pending { border-color: var(--running); background: #fff; color: var(--running); }

#log { max-height: 40vh; overflow: auto; }
.log-entry { font-family: var(--mono); font-size: .8rem; padding: .1rem 0; border-bottom: 1px dotted var(--line); white-space: pre-wrap; overflow-wrap: anywhere; }
.log-entry[data-outcome=rejected] { color: var(--failed); }
.log-entry[data-outcome=applied] { color: var(--completed); }
.contract-diff td { font-family: var(--mono); font-size: .8rem; }
.change-added td { background: #eaf5ea; }
.change-removed td { background: #fbeaea; text-decoration: line-through; }
.amendments { margin: .25rem 0; padding-left: 1.25rem; font-size: .85rem; }
.amendment.direction-relax { color: var(--failed); }
`;
