/**
 * The dashboard's events: rendered as `run` prints them with the studio
 * renderer, and folded into the per-prompt timeline, from the events of
 * real simulated runs.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  contract,
  createRenderer,
  currentRun,
  type EventLine,
  log,
  type RunEvent,
  snapshot,
  terminalSafe,
  type ViewSettings,
} from "../../mod.ts";
import {
  foldTimeline,
  renderEvents,
} from "../../commands/serve/_events_view.ts";
import { runPage } from "../../commands/serve/_pages.ts";
import { RenderCache } from "../../commands/serve/_render_cache.ts";
import type { RenderedEvent } from "../../commands/serve/_model.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

const NOTES_CONTRACT = `verify:
  files_exist: [NOTES.md]
  contains: [{path: NOTES.md, text: "done"}]`;

/**
 * Attempt 1 fails (retried), attempt 2 fails verification (repaired),
 * attempt 3 edits NOTES.md, thinks and talks `rounds` times `delay` ms apart.
 */
function notesPrompt(rounds: number, delay: number): string {
  return promptFile(`${NOTES_CONTRACT}
simulate:
  attempts:
    - error: {kind: provider_capacity, message: "at capacity"}
    - writes: [{path: NOTES.md, text: "draft"}]
    - delay_ms: ${delay}
      repeat: ${rounds}
      thinking: ["weighing <b>it</b>"]
      messages: ["working <script>alert(1)</script>"]
      tools: [{name: Edit, input: {file_path: NOTES.md, old_string: draft, new_string: done}, output: "ok\\n\\u001b]0;title\\u0007x"}]
      writes: [{path: NOTES.md, text: "done"}]`);
}

const QUICK = promptFile("simulate: {attempts: [{messages: [hello]}]}");

async function readEvents(stateRoot: string): Promise<EventLine[]> {
  const text = await Deno.readTextFile(
    join(stateRoot, "control", "events.jsonl"),
  );
  return text.split("\n").filter(Boolean).map((line) => ({
    line,
    event: JSON.parse(line) as RunEvent,
  }));
}

/** What the studio renderer gives each event, as plain lines. */
function studioLines(events: EventLine[], view: ViewSettings): string[][] {
  const renderer = createRenderer({ ...view, log_mode: "studio" });
  return events.map(({ event }) => {
    const text = terminalSafe(renderer.render(event));
    if (text === "") return [];
    return (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  });
}

const STUDIO: ViewSettings = {
  log_mode: "studio",
  tool_output: "summary",
  thinking: "show",
  diff: "full",
};

Deno.test("renderEvents() gives the text run --log-mode studio prints for the same events and view", async () => {
  for (
    const view of [
      STUDIO,
      { ...STUDIO, thinking: "hide", diff: "stat", tool_output: "full" },
    ] as ViewSettings[]
  ) {
    await using packet = await makePacket({
      prompts: {
        "01_notes.prompt.md": notesPrompt(2, 0),
        "02_quick.prompt.md": QUICK,
      },
    });
    const run = await runCli([
      "run",
      packet.dir,
      "--log-mode",
      "studio",
      "--thinking",
      view.thinking,
      "--diff",
      view.diff,
      "--tool-output",
      view.tool_output,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const events = await readEvents(packet.stateRoot);
    const rendered = renderEvents(events, view);
    assert.deepEqual(
      rendered.map((e) => e.seq),
      events.map(({ event }) => event.seq),
    );
    assert.deepEqual(
      rendered.map((e) => e.type),
      events.map(({ event }) => event.type),
    );
    // Event by event, what the studio renderer says, without escapes.
    assert.deepEqual(rendered.map((e) => e.lines), studioLines(events, view));
    // And all of it is what the CLI printed (line breaks aside: streamed
    // text continues a line across events).
    assert.equal(
      rendered.map((e) => e.lines.join("")).join(""),
      run.stdout.replaceAll("\n", ""),
    );
    const all = rendered.flatMap((e) => e.lines).join("\n");
    assert.match(all, /working <script>alert\(1\)<\/script>/);
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(all, /[\x00-\x08\x0b-\x1f\x7f]/);
    if (view.thinking === "hide") {
      assert.doesNotMatch(all, /weighing/);
      const thinking = rendered.filter((_event, i) =>
        events[i]!.event.data.kind === "thinking"
      );
      assert.ok(thinking.length > 0);
      assert.ok(thinking.every((e) => e.lines.length === 0));
      assert.doesNotMatch(all, /^ {4}[-+] (draft|done)$/m);
    } else {
      assert.match(all, /~ weighing <b>it<\/b>/);
      // diff: full shows the tool call's patch under it.
      const edit = rendered.find((e) =>
        e.type === "tool_call_completed" && e.lines.join("\n").includes("draft")
      );
      assert.ok(edit, "an edit shows its diff");
      assert.deepEqual(edit.lines.slice(-2), ["    - draft", "    + done"]);
    }
  }
});

Deno.test("renderEvents() from a seq keeps what earlier events told the renderer and returns only the range", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": notesPrompt(1, 0) },
  });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 0, run.stderr);
  const events = await readEvents(packet.stateRoot);
  const completed =
    events.find(({ event }) => event.type === "tool_call_completed")!.event.seq;
  const whole = renderEvents(events, STUDIO);
  const part = renderEvents(events, STUDIO, {
    from: completed,
    to: completed + 1,
  });
  assert.deepEqual(part.map((e) => e.seq), [completed, completed + 1]);
  assert.deepEqual(part, whole.filter((e) => e.seq >= completed).slice(0, 2));
  // The completion names its tool from the start event before the range.
  assert.match(part[0]!.lines[0]!, /Edited NOTES\.md/);
});

Deno.test("foldTimeline() shows a retried, a repaired and a completed attempt with a steer and an amendment of a live run", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": notesPrompt(40, 40),
      "02_quick.prompt.md": QUICK,
    },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "prompt_started" && e.attempt === 3);
  const amended = await runCli([
    "control",
    "amend",
    packet.dir,
    "01",
    "--add-contains",
    "NOTES.md=do",
    "--reason",
    "pin the <b>word</b>",
    "--author",
    "ada",
  ]);
  assert.equal(amended.code, 0, amended.stderr);
  const steered = await runCli([
    "control",
    "steer",
    packet.dir,
    "finish <script>x</script>",
    "--author",
    "bob",
  ]);
  assert.equal(steered.code, 0, steered.stderr);
  const done = await run.finish();
  assert.equal(done.code, 0, done.stderr);

  const events = await readEvents(packet.stateRoot);
  const view = await contract(packet.dir, "01");
  assert.equal(view.amendments.length, 1);
  const prompts = [{ id: "01", name: "Notes" }, { id: "02", name: null }];
  const timeline = foldTimeline(events, prompts, view.amendments);
  const seqOf = (match: (e: RunEvent) => boolean): number =>
    events.find(({ event }) => match(event))!.event.seq;
  const started = (n: number): number =>
    seqOf((e) =>
      e.type === "prompt_started" && e.prompt_id === "01" && e.attempt === n
    );

  assert.deepEqual(timeline.map((t) => [t.id, t.name]), [
    ["01", "Notes"],
    ["02", "Quick"],
  ]);
  const notes = timeline[0]!;
  assert.deepEqual(
    notes.attempts.map((a) => [a.number, a.mode, a.outcome, a.first_seq]),
    [
      [1, "run", "retried", started(1)],
      [2, "retry", "repaired", started(2)],
      [3, "repair", "completed", started(3)],
    ],
  );
  assert.equal(
    notes.attempts[0]!.last_seq,
    seqOf((e) => e.type === "retry_scheduled"),
  );
  assert.equal(notes.attempts[1]!.last_seq, started(3) - 1);
  assert.equal(
    notes.attempts[2]!.last_seq,
    seqOf((e) => e.type === "prompt_completed" && e.prompt_id === "01"),
  );
  const steer = seqOf((e) => e.type === "prompt_steered");
  assert.deepEqual(notes.marks.map((m) => m.kind).sort(), [
    "amendment",
    "steer",
  ]);
  const steerMark = notes.marks.find((m) => m.kind === "steer")!;
  assert.equal(steerMark.seq, steer);
  assert.equal(steerMark.text, "bob: finish <script>x</script>");
  const amendMark = notes.marks.find((m) => m.kind === "amendment")!;
  assert.ok(
    amendMark.seq >= started(3) && amendMark.seq <= steer,
    `the amendment (made before the steer) is marked in attempt 3: ${amendMark.seq}`,
  );
  assert.match(
    amendMark.text,
    /^ada: add contains .*post_failure.*pin the <b>word<\/b>$/,
  );
  assert.deepEqual(
    notes.marks.map((m) => m.seq),
    [...notes.marks.map((m) => m.seq)].sort((a, b) => a - b),
  );
  const quick = timeline[1]!;
  assert.deepEqual(quick.attempts.map((a) => [a.number, a.mode, a.outcome]), [
    [1, "run", "completed"],
  ]);
  assert.deepEqual(quick.marks, []);

  // Halfway through, the attempt under way is running and has no end yet.
  const partial = foldTimeline(
    events.filter(({ event }) => event.seq <= steer),
    prompts,
  );
  assert.deepEqual(partial[0]!.attempts.map((a) => a.outcome), [
    "retried",
    "repaired",
    "running",
  ]);
  assert.deepEqual(partial[1]!.attempts, []);
  // The run's page from these: every event once, in order, and the
  // agent's and operators' markup as text.
  const ref = await currentRun(packet.stateRoot);
  const page = runPage({
    row: {
      root: "ws",
      run: ref.run_id,
      target: packet.dir,
      packet: "test-packet",
      status: "completed",
      progress: { completed: 2, selected: 2 },
      current: { id: "02", name: "Quick" },
      attempt: { number: 1, mode: "run", detail: null },
      elapsed_ms: 1000,
      input_tokens: null,
      output_tokens: null,
      cost_usd: null,
      last_event_age_ms: 10,
      runner: "none",
      attention: null,
    },
    state_root: packet.stateRoot,
    packet_dir: packet.dir,
    snapshot: await snapshot(ref),
    view: STUDIO,
    prompts,
    timeline,
    events: renderEvents(events, STUDIO),
    earlier: 0,
    log: await log(ref),
    contracts: [view],
    outcome: null,
  }, { author: "web:ada" });
  assert.deepEqual(
    [...page.matchAll(/<div class="event(?: empty)?" data-seq="(\d+)"/g)].map((
      m,
    ) => Number(m[1])),
    events.map(({ event }) => event.seq),
  );
  assert.equal(page.match(/<script/g)?.length, 1);
  assert.doesNotMatch(page, /<b>|<script>/);
  assert.match(page, /working &lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(
    page,
    /class="mark steer" data-seq="\d+" title="steer at event \d+: bob: finish &lt;script&gt;x&lt;\/script&gt;"/,
  );
  assert.match(
    page,
    /class="log-entry" data-request="[^"]+" data-outcome="applied" data-command="steer"/,
  );
  assert.match(page, /class="mark amendment"/);
  assert.match(page, /pin the &lt;b&gt;word&lt;\/b&gt;/);
  // Amendments of another run are not this run's marks.
  assert.deepEqual(
    foldTimeline(events, prompts, [{
      ...view.amendments[0]!,
      run_id: "another",
    }])[0]!.marks.map((m) => m.kind),
    ["steer"],
  );
});

Deno.test("foldTimeline() ends an attempt failed on prompt_failed and interrupted when the run ends under it", () => {
  let seq = 0;
  const line = (
    type: RunEvent["type"],
    prompt: string | null,
    attempt: number | null,
    data: Record<string, unknown> = {},
  ): EventLine => {
    const event = {
      v: 1,
      seq: ++seq,
      at: new Date(Date.UTC(2026, 10, 30, 0, 0, seq)).toISOString(),
      run_id: "r1",
      prompt_id: prompt,
      attempt,
      type,
      data,
    } as RunEvent;
    return { line: JSON.stringify(event), event };
  };
  const events = [
    line("prompt_started", "01", 1, { mode: "run", name: "One" }),
    line("run_started", "01", 1),
    line("prompt_failed", "01", 1, { status: "failed" }),
    line("prompt_started", "02", 1, { mode: "run", name: "Two" }),
    line("prompt_steered", "02", 1, { author: "eve", text: "stop" }),
    line("run_finished", null, null, { status: "interrupted" }),
  ];
  const timeline = foldTimeline(events, [{ id: "01", name: null }]);
  assert.deepEqual(
    timeline.map((t) => [t.id, t.name, t.attempts.map((a) => a.outcome)]),
    [["01", "One", ["failed"]], ["02", "Two", ["interrupted"]]],
  );
  assert.deepEqual(timeline[1]!.marks, [
    { kind: "steer", seq: 5, text: "eve: stop" },
  ]);
});

Deno.test("RenderCache gives batches that read as one rendering of the run, reads each event once, and renders a range older than it keeps again from seq 1", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": notesPrompt(4, 0) },
  });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 0, run.stderr);
  const events = await readEvents(packet.stateRoot);
  const whole = renderEvents(events, STUDIO);
  const reads: [number, number][] = [];
  const cache = new RenderCache((_ref, from, to) => {
    reads.push([from, to]);
    return Promise.resolve(
      events.filter(({ event }) => event.seq >= from && event.seq <= to),
    );
  }, 10);
  const ref = { state_root: packet.stateRoot, run_id: "r" };
  const batches: RenderedEvent[] = [];
  for (let from = 1; from <= events.length; from += 3) {
    const got = await cache.rendered(ref, STUDIO, from, from + 2);
    batches.push(...got);
  }
  // The run's totals and tool names survive the batching.
  assert.deepEqual(batches, whole);
  // Each batch read only what the renderer had not seen.
  assert.equal(reads.length, Math.ceil(events.length / 3));
  assert.deepEqual(reads[1], [4, 6]);
  // The cache keeps 10: seq 1 is rendered again, from the start.
  reads.length = 0;
  assert.deepEqual(await cache.rendered(ref, STUDIO, 1, 2), whole.slice(0, 2));
  assert.deepEqual(reads, [[1, 2]]);
  // Another view is a renderer of its own.
  const hidden = { ...STUDIO, thinking: "hide" } as ViewSettings;
  assert.deepEqual(
    await cache.rendered(ref, hidden, 1, events.length),
    renderEvents(events, hidden),
  );
});
