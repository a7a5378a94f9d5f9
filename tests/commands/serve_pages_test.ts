/**
 * The dashboard's pages as functions: the DOM contract the browser tests
 * rely on, no inline script or style, and hostile text escaped and inert.
 */

import assert from "node:assert/strict";
import type {
  ContractView,
  LogEntry,
  Snapshot,
  ViewSettings,
} from "../../mod.ts";
import { APP_CSS, APP_JS } from "../../commands/serve/_assets.ts";
import { esc } from "../../commands/serve/_html.ts";
import type { RunPageModel, RunRow } from "../../commands/serve/_model.ts";
import {
  contractPage,
  messagePage,
  runPage,
  runsPage,
} from "../../commands/serve/_pages.ts";

/** Hostile text of every kind, with a marker to find it by. */
function hostile(marker: string): string {
  return `${marker}<script>alert(1)</script><img src=x onerror=alert(1)>` +
    `<a href="javascript:alert(1)">x</a>'"\x1b[31m\x1b]0;t\x07\x00\x08`;
}

/** How hostile text must come out: escaped, without its escapes. */
function escaped(marker: string): string {
  return `${marker}&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;` +
    `&lt;a href=&quot;javascript:alert(1)&quot;&gt;x&lt;/a&gt;&#39;&quot;`;
}

const VIEW: ViewSettings = {
  log_mode: "studio",
  tool_output: "summary",
  thinking: "show",
  diff: "stat",
};

function row(overrides: Partial<RunRow> = {}): RunRow {
  return {
    root: "ws-1",
    run: "20261130-abc",
    target: hostile("TARGET"),
    packet: hostile("PACKET"),
    status: "running",
    progress: { completed: 1, selected: 3 },
    current: { id: "01", name: hostile("CURRENT") },
    attempt: { number: 2, mode: "retry", detail: hostile("DETAIL") },
    elapsed_ms: 125_000,
    input_tokens: 12_345,
    output_tokens: 950,
    cost_usd: 0.0123,
    last_event_age_ms: 4000,
    runner: "alive",
    attention: null,
    ...overrides,
  };
}

function snapshot(): Snapshot {
  return {
    v: 1,
    run_id: "20261130-abc",
    packet: hostile("SNAPPACKET"),
    packet_dir: "/tmp/p",
    status: "running",
    prompt_id: "01",
    prompt_name: hostile("SNAPPROMPT"),
    attempt: 2,
    mode: "retry",
    provider: "simulated",
    model: hostile("MODEL"),
    run_started_at: "2026-11-30T00:00:00.000Z",
    prompt_started_at: "2026-11-30T00:00:01.000Z",
    updated_at: "2026-11-30T00:00:02.000Z",
    elapsed_ms: 2000,
    prompt_elapsed_ms: 1000,
    tool_count: 1,
    input_tokens: 100,
    output_tokens: 10,
    cost_usd: null,
    agent_pid: null,
    agent_pid_start: null,
    event_count: 9,
    last_seq: 9,
    steer_count: 1,
    max_steers: 5,
    view: VIEW,
    pid: 1,
    host: "h",
    started_by: null,
    prompt_ids: ["01", "02"],
    attention: null,
    budget: null,
  };
}

function logEntry(outcome: LogEntry["outcome"]): LogEntry {
  return {
    v: 1,
    at: "2026-11-30T00:00:03.000Z",
    run_id: "20261130-abc",
    request_id: "req-1",
    command: "steer",
    params: { text: hostile("LOGTEXT") },
    author: hostile("LOGAUTHOR"),
    outcome,
    reason: outcome === "rejected" ? hostile("LOGREASON") : null,
    prompt_id: "01",
    attempt: 2,
  };
}

function contractView(): ContractView {
  return {
    prompt_id: "01",
    packet: { files_exist: [{ path: "NOTES.md" }] },
    enforced: { files_exist: [{ path: "NOTES.md" }, { path: "X.md" }] },
    amendments: [{
      at: "2026-11-30T00:00:01.500Z",
      prompt: "01",
      author: hostile("AMENDAUTHOR"),
      reason: hostile("AMENDREASON"),
      phase: "post_failure",
      direction: "add",
      clause: "files_exist",
      operation: "add",
      entries: [hostile("AMENDENTRY")],
      run_id: "20261130-abc",
      persisted: false,
    }],
    diff: [
      { change: "same", clause: "files_exist", entry: "NOTES.md" },
      { change: "added", clause: "files_exist", entry: hostile("DIFFENTRY") },
    ],
  };
}

function model(overrides: Partial<RunPageModel> = {}): RunPageModel {
  return {
    row: row(),
    state_root: "/tmp/p/.prompt_runner",
    packet_dir: "/tmp/p",
    snapshot: snapshot(),
    view: VIEW,
    prompts: [
      { id: "01", name: hostile("PROMPTNAME") },
      { id: hostile("PROMPTID"), name: null },
    ],
    timeline: [{
      id: "01",
      name: hostile("TLNAME"),
      attempts: [
        {
          number: 1,
          mode: "run",
          outcome: "retried",
          first_seq: 1,
          last_seq: 4,
        },
        {
          number: 2,
          mode: "retry",
          outcome: "running",
          first_seq: 5,
          last_seq: 9,
        },
      ],
      marks: [
        { kind: "steer", seq: 7, text: hostile("STEERTEXT") },
        { kind: "amendment", seq: 8, text: hostile("AMENDMARK") },
      ],
    }],
    events: [
      { seq: 8, type: "message_received", lines: ["", hostile("AGENT")] },
      { seq: 9, type: "message_streamed", lines: [] },
    ],
    earlier: 7,
    log: [logEntry("accepted"), logEntry("rejected")],
    contracts: [contractView()],
    outcome: {
      action: "steer",
      outcome: "rejected",
      reason: hostile("OUTCOME"),
    },
    ...overrides,
  };
}

const CONTEXT = { author: hostile("AUTHOR") };

/** A start tag: its name and attributes. */
interface Tag {
  name: string;
  attrs: Record<string, string>;
  at: number;
}

/**
 * Every tag of a page, parsed strictly: a `<` that does not open a
 * well-formed tag (name, then attributes each bare or `="…"` with no quote
 * inside) fails the test, so text cannot have opened a tag.
 */
function tagsOf(html: string): Tag[] {
  const tags: Tag[] = [];
  const strict =
    /^<(?:!doctype html|\/([a-z][a-z0-9]*)|([a-z][a-z0-9]*)((?:\s+[a-z][a-z0-9-]*(?:="[^"<>]*")?)*)\s*)>/;
  for (let at = html.indexOf("<"); at >= 0; at = html.indexOf("<", at + 1)) {
    const found = strict.exec(html.slice(at));
    assert.ok(found, `a well-formed tag at ${at}: ${html.slice(at, at + 80)}`);
    if (found[2] === undefined) continue;
    const attrs: Record<string, string> = {};
    for (
      const [, name, value] of found[3]!.matchAll(
        /\s([a-z][a-z0-9-]*)(?:="([^"]*)")?/g,
      )
    ) {
      assert.equal(attrs[name!], undefined, `one ${name} in ${found[0]}`);
      attrs[name!] = value ?? "";
    }
    tags.push({ name: found[2], attrs, at });
  }
  return tags;
}

function find(
  tags: Tag[],
  match: (tag: Tag) => boolean,
  what: string,
): Tag {
  const tag = tags.find(match);
  assert.ok(tag, `the page has ${what}`);
  return tag;
}

function hasClass(tag: Tag, name: string): boolean {
  return (tag.attrs.class ?? "").split(" ").includes(name);
}

/** What every page must hold to: no inline script, style or handler. */
function assertInert(html: string): Tag[] {
  const tags = tagsOf(html);
  const scripts = tags.filter((t) => t.name === "script");
  assert.deepEqual(scripts.map((t) => t.attrs), [{
    src: "/static/app.js",
    defer: "",
  }]);
  assert.match(html, /<script src="\/static\/app\.js" defer><\/script>/);
  assert.ok(
    tags.some((t) =>
      t.name === "link" && t.attrs.rel === "stylesheet" &&
      t.attrs.href === "/static/app.css"
    ),
  );
  for (const tag of tags) {
    assert.notEqual(tag.name, "img");
    assert.notEqual(tag.name, "style");
    assert.notEqual(tag.name, "iframe");
    for (const [name, value] of Object.entries(tag.attrs)) {
      assert.ok(!name.startsWith("on"), `no handler: ${name}`);
      assert.notEqual(name, "style");
      if (name === "href" || name === "action" || name === "src") {
        assert.match(
          value,
          /^\/(?!\/)/,
          `a same-origin path: ${name}=${value}`,
        );
      }
    }
  }
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(html, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
  assert.doesNotMatch(html, /<script>|<img|javascript:alert\(1\)"/i);
  return tags;
}

Deno.test("runsPage() has the runs table the page's script updates, one row per run with its fields and link", () => {
  const rows = [
    row(),
    row({
      root: "r-0123456789ab",
      run: "",
      status: "never_run",
      packet: null,
      target: "/tmp/x",
    }),
  ];
  const html = runsPage(rows, CONTEXT);
  const tags = assertInert(html);
  find(tags, (t) => t.name === "table" && t.attrs.id === "runs", "#runs");
  const trs = tags.filter((t) => t.name === "tr" && hasClass(t, "run"));
  assert.deepEqual(trs.map((t) => t.attrs["data-run"]), [
    "ws-1/20261130-abc",
    "r-0123456789ab/",
  ]);
  const first = html.slice(trs[0]!.at, trs[1]!.at);
  const fields = tagsOf(first).filter((t) => t.attrs["data-field"]).map((t) =>
    t.attrs["data-field"]
  );
  for (
    const name of [
      "status",
      "progress",
      "attempt",
      "elapsed",
      "tokens",
      "cost",
      "last-event",
      "runner",
    ]
  ) {
    assert.ok(fields.includes(name), `a ${name} cell`);
  }
  const link = find(
    tags,
    (t) => t.name === "a" && hasClass(t, "run-link"),
    "a.run-link",
  );
  assert.equal(link.attrs.href, "/run/ws-1/20261130-abc");
  assert.match(first, /data-field="progress">1\/3</);
  assert.match(first, /data-field="attempt">#2 retry \(DETAIL&lt;/);
  assert.match(first, /data-field="elapsed">2m05s</);
  assert.match(first, /data-field="tokens">12\.3k in · 950 out</);
  assert.match(first, /data-field="cost">\$0\.0123</);
  assert.match(first, /data-field="last-event">4s ago</);
  assert.match(first, /data-field="runner"[^>]*>alive</);
  assert.ok(html.includes(escaped("PACKET")));
  assert.ok(html.includes(escaped("TARGET")));
  assert.ok(html.includes(escaped("AUTHOR")));
  // A root that never ran has no link to a run.
  assert.equal(tags.filter((t) => hasClass(t, "run-link")).length, 1);
  const body = find(tags, (t) => t.name === "body", "<body>");
  assert.equal(body.attrs["data-page"], "runs");
});

Deno.test("runsPage() puts the runs that need a person first, with the reason in an attention cell (escaped)", () => {
  const needs = {
    reason: "stalled",
    prompt_id: "02",
    attempt: 1,
    detail: hostile("DETAIL"),
  };
  const rows = [
    row({ run: "r-quiet" }),
    row({ run: "r-needs", attention: needs }),
    row({ run: "r-other" }),
  ];
  const html = runsPage(rows, CONTEXT);
  const tags = assertInert(html);
  const trs = tags.filter((t) => t.name === "tr" && hasClass(t, "run"));
  assert.deepEqual(trs.map((t) => t.attrs["data-run"]), [
    "ws-1/r-needs",
    "ws-1/r-quiet",
    "ws-1/r-other",
  ]);
  assert.equal(trs[0]!.attrs["data-attention"], "stalled");
  assert.equal(trs[1]!.attrs["data-attention"], undefined);
  const first = html.slice(trs[0]!.at, trs[1]!.at);
  assert.match(first, /data-field="attention"[^>]*>stalled on 02 attempt 1</);
});

Deno.test("runPage() shows the snapshot's attention and spend against budget", () => {
  const snap = {
    ...snapshot(),
    attention: {
      reason: "budget_exhausted" as const,
      since: "2026-11-30T00:00:00.000Z",
      prompt_id: "01",
      attempt: 2,
      detail: hostile("SPENT"),
    },
    budget: [
      {
        key: "max_cost_usd" as const,
        scope: "run" as const,
        limit: 0.5,
        spent: 0.625,
      },
    ],
  };
  const html = runPage(model({ snapshot: snap }), CONTEXT);
  const tags = assertInert(html);
  const field = find(
    tags,
    (t) => t.attrs["data-field"] === "attention",
    "the attention field",
  );
  assert.equal(field.attrs["data-attention"], "budget_exhausted");
  assert.ok(html.includes(escaped("SPENT")));
  assert.match(html, /budget exhausted on 01 attempt 2: /);
  assert.match(
    html,
    /data-field="budget">\$0\.6250 of \$0\.5000 \(the run&#39;s\)</,
  );
});

Deno.test("runPage() carries the DOM contract: panels, timeline, events, log, contract and the four forms", () => {
  const html = runPage(model(), CONTEXT);
  const tags = assertInert(html);
  const body = find(tags, (t) => t.name === "body", "<body>");
  assert.equal(body.attrs["data-root"], "ws-1");
  assert.equal(body.attrs["data-run"], "20261130-abc");
  assert.equal(body.attrs["data-page"], "run");
  assert.deepEqual(
    JSON.parse(body.attrs["data-view"]!.replaceAll("&quot;", '"')),
    VIEW,
  );
  for (const id of ["snapshot", "timeline", "events", "log", "contract"]) {
    const section = find(tags, (t) => t.attrs.id === id, `#${id}`);
    assert.equal(section.name, "section");
  }
  const snapshotFields = tags.filter((t) => t.attrs["data-field"]).map((t) =>
    t.attrs["data-field"]
  );
  for (
    const name of [
      "status",
      "prompt",
      "attempt",
      "view",
      "tokens",
      "cost",
      "steers",
    ]
  ) {
    assert.ok(snapshotFields.includes(name), `snapshot [data-field=${name}]`);
  }
  assert.match(html, /data-field="steers">1 of 5</);
  assert.match(
    html,
    /data-field="view">studio · tools summary · thinking show · diff stat</,
  );

  // The timeline: a prompt, its attempts coloured by outcome, its marks.
  const prompt = find(
    tags,
    (t) => hasClass(t, "prompt") && t.attrs["data-prompt"] === "01",
    ".prompt[data-prompt=01]",
  );
  assert.equal(prompt.name, "div");
  const attempts = tags.filter((t) => hasClass(t, "attempt"));
  assert.deepEqual(
    attempts.map((t) => [t.name, t.attrs.class, t.attrs["data-attempt"]]),
    [
      ["span", "attempt outcome-retried", "1"],
      ["span", "attempt outcome-running", "2"],
    ],
  );
  const marks = tags.filter((t) => hasClass(t, "mark") && t.attrs["data-seq"]);
  assert.deepEqual(marks.map((t) => [t.attrs.class, t.attrs["data-seq"]]), [
    ["mark steer", "7"],
    ["mark amendment", "8"],
  ]);
  assert.ok(marks[0]!.attrs.title!.includes(escaped("STEERTEXT")));
  assert.ok(marks[1]!.attrs.title!.includes(escaped("AMENDMARK")));

  // The events: one div per seq with a <pre>, in order, hidden ones too.
  const events = tags.filter((t) => hasClass(t, "event"));
  assert.deepEqual(
    events.map((t) => [t.name, t.attrs["data-seq"], t.attrs["data-type"]]),
    [["div", "8", "message_received"], ["div", "9", "message_streamed"]],
  );
  assert.ok(
    html.includes(
      `data-seq="8" data-type="message_received"><pre>\n${
        escaped("AGENT")
      }</pre>`,
    ),
  );
  assert.match(html, /data-earlier="7">7 earlier events not shown</);

  // The log: request and outcome on each entry, text escaped.
  const entries = tags.filter((t) => hasClass(t, "log-entry"));
  assert.deepEqual(
    entries.map((t) => [t.attrs["data-request"], t.attrs["data-outcome"]]),
    [["req-1", "accepted"], ["req-1", "rejected"]],
  );
  for (const marker of ["LOGTEXT", "LOGAUTHOR", "LOGREASON"]) {
    assert.ok(html.includes(escaped(marker)), marker);
  }

  // The contract: packet vs enforced, the amendment with its phase.
  assert.match(html, /class="change-added"/);
  assert.match(html, /data-phase="post_failure"/);
  for (
    const marker of ["AMENDAUTHOR", "AMENDREASON", "AMENDENTRY", "DIFFENTRY"]
  ) {
    assert.ok(html.includes(escaped(marker)), marker);
  }

  // The forms: plain POSTs to the action paths, with the agreed fields.
  const forms: Record<string, string[]> = {
    steer: ["text", "prompt"],
    view: ["log_mode", "tool_output", "thinking", "diff"],
    amend: ["prompt", "clause", "value", "reason", "persist"],
    relax: ["prompt", "clause", "reason", "confirm", "persist"],
  };
  for (const [name, fields] of Object.entries(forms)) {
    const form = find(
      tags,
      (t) => t.name === "form" && t.attrs.id === `${name}-form`,
      `#${name}-form`,
    );
    assert.equal(form.attrs.method, "post");
    assert.equal(form.attrs.action, `/run/ws-1/20261130-abc/${name}`);
    const end = html.indexOf("</form>", form.at);
    const inner = tagsOf(html.slice(form.at, end));
    const names = inner.filter((t) => t.attrs.name).map((t) => t.attrs.name);
    assert.deepEqual(names, fields, `${name} fields`);
    const outputs = inner.filter((t) => t.name === "output");
    assert.equal(outputs.length, 1);
    assert.equal(outputs[0]!.attrs.class, "outcome");
    assert.ok(
      inner.some((t) => t.name === "button" && t.attrs.type === "submit"),
    );
  }
  // Checkboxes post `on`; the view's selects can leave a setting unchanged.
  assert.match(html, /<input name="confirm" type="checkbox">/);
  assert.match(
    html,
    /<select name="thinking"><option value="">unchanged<\/option><option value="show">show<\/option><option value="hide">hide<\/option><\/select>/,
  );
  // Prompt choices carry hostile ids escaped.
  assert.ok(html.includes(`<option value="${escaped("PROMPTID")}">`));

  // The outcome of the post just made shows, escaped, in its form and a banner.
  assert.match(html, /<output class="outcome" data-outcome="rejected"/);
  assert.ok(html.includes(`rejected: ${escaped("OUTCOME")}</output>`));
  assert.match(html, /id="outcome"[^>]*data-outcome="rejected"/);
  for (
    const marker of [
      "PACKET",
      "SNAPPROMPT",
      "MODEL",
      "PROMPTNAME",
      "TLNAME",
      "AUTHOR",
    ]
  ) {
    assert.ok(html.includes(escaped(marker)), marker);
  }
});

Deno.test("runPage() marks a run's amendments on the timeline when the fold had none, and none of other runs", () => {
  const base = model();
  const html = runPage({
    ...base,
    timeline: [{ ...base.timeline[0]!, marks: [] }],
    contracts: [{
      ...contractView(),
      amendments: [
        contractView().amendments[0]!,
        { ...contractView().amendments[0]!, run_id: "older" },
      ],
    }],
  }, CONTEXT);
  const marks = tagsOf(html).filter((t) =>
    hasClass(t, "mark") && t.attrs["data-seq"]
  );
  assert.deepEqual(marks.map((t) => [t.attrs.class, t.attrs["data-seq"]]), [
    ["mark amendment", "9"],
  ]);
});

Deno.test("a finished run's page says so, and a page with no snapshot shows the row", () => {
  const html = runPage(
    model({
      snapshot: null,
      outcome: null,
      row: row({ status: "completed", runner: "none" }),
      events: [{ seq: 12, type: "run_finished", lines: ["■ run completed"] }],
    }),
    CONTEXT,
  );
  const tags = assertInert(html);
  const body = find(tags, (t) => t.name === "body", "<body>");
  assert.equal(body.attrs["data-finished"], "");
  assert.equal(body.attrs["data-last-seq"], "12");
  assert.match(html, /data-field="status">completed</);
  assert.match(html, /data-field="attempt">#2 retry/);
  assert.doesNotMatch(html, /id="outcome"/);
  assert.doesNotMatch(html, /data-outcome="rejected" aria-live/);
});

Deno.test("messagePage() and contractPage() escape what they are given", () => {
  const message = messagePage(hostile("TITLE"), hostile("MESSAGE"));
  assertInert(message);
  assert.ok(message.includes(escaped("TITLE")));
  assert.ok(message.includes(escaped("MESSAGE")));
  const page = contractPage(model(), "01", CONTEXT);
  const tags = assertInert(page);
  find(tags, (t) => t.attrs.id === "contract", "#contract");
  assert.ok(page.includes(escaped("AMENDREASON")));
  const missing = contractPage(model(), hostile("NOPE"), CONTEXT);
  assertInert(missing);
  assert.ok(missing.includes(escaped("NOPE")));
});

Deno.test("esc() escapes markup and quotes and drops escape sequences and control characters", () => {
  assert.equal(
    esc(`<a href="x" onclick='y'>&</a>\x1b[31m\x07\ttab\nline`),
    "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;\ttab\nline",
  );
  assert.equal(esc(null), "");
  assert.equal(esc(42), "42");
});

Deno.test("the page's script parses, builds nodes with textContent only, and names the routes and fields of the contract", () => {
  new Function(APP_JS); // A syntax error throws here.
  for (
    const banned of [
      "innerHTML",
      "outerHTML",
      "insertAdjacentHTML",
      "document.write",
      "eval(",
      "new Function",
      'setAttribute("on',
      ".style.",
    ]
  ) {
    assert.ok(!APP_JS.includes(banned), `the script does not use ${banned}`);
  }
  for (
    const needed of [
      '"/runs/stream"',
      '"/events/rendered?"',
      '"/rendered?from="',
      '"snapshot"',
      '"log"',
      '"run_finished"',
      'Accept: "application/json"',
      '"application/x-www-form-urlencoded;charset=UTF-8"',
      "output.outcome",
      '"a reason is required"',
      "textContent",
      "source.close()",
      "data-root",
      "data-run",
    ]
  ) {
    assert.ok(APP_JS.includes(needed), `the script has ${needed}`);
  }
  for (
    const outcome of [
      "completed",
      "retried",
      "repaired",
      "failed",
      "interrupted",
      "running",
    ]
  ) {
    assert.match(APP_CSS, new RegExp(`\\.outcome-${outcome} \\{ background`));
  }
  assert.doesNotMatch(APP_CSS, /url\(|@import|expression\(/);
});
