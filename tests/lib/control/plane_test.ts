import assert from "node:assert/strict";
import { join } from "node:path";
import { events } from "../../../lib/control/events.ts";
import type { LogEntry } from "../../../lib/control/log_entry.ts";
import { MAX_REQUEST_BYTES } from "../../../lib/control/plane.ts";
import { writeRequest } from "../../../lib/control/request.ts";
import type { Snapshot } from "../../../lib/control/snapshot.ts";
import { SNAPSHOT_FIELDS } from "../../../lib/shared/snapshot_schema.ts";
import type {
  BoundaryCommand,
  SteerCommand,
} from "../../../lib/shared/run_hooks.ts";
import { DEFAULT_VIEW } from "../../../lib/shared/view.ts";
import {
  drainRequests,
  listNames,
  logEntriesOf,
  makeControlRoot,
  promptStart,
  readJsonl,
  requestJson,
  runEvent,
  writeRawRequest,
} from "../../_helpers/plane.ts";
import { waitFor } from "../../_helpers/run_cli.ts";

const RECEIPT_KEYS = [
  "command",
  "outcome",
  "reason",
  "recorded_at",
  "request_id",
  "run_id",
];

const LOG_KEYS = [
  "at",
  "attempt",
  "author",
  "command",
  "outcome",
  "params",
  "prev",
  "prompt_id",
  "reason",
  "request_id",
  "run_id",
  "v",
];

async function readSnapshot(path: string): Promise<Snapshot> {
  return JSON.parse(await Deno.readTextFile(path)) as Snapshot;
}

async function mode(path: string): Promise<number> {
  const info = await Deno.lstat(path);
  assert.notEqual(info.mode, null, `no mode for "${path}"`);
  return info.mode! & 0o777;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

function steerCommands(commands: BoundaryCommand[]): SteerCommand[] {
  return commands.filter((c): c is SteerCommand => c.command === "steer");
}

// --- open and close -------------------------------------------------------

Deno.test("openPlane() creates control/, requests/, outcomes/ and events/ with mode 0700 and its files with 0600", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "run_started"));
  const { request_id } = await writeRequest(root.ref("run-a"), "steer", {
    text: "use tabs",
  }, { author: "alice" });
  const [command] = await plane.boundary({ idle: false });
  assert.equal(command?.command, "steer");
  await plane.steerSettled({
    command: command as SteerCommand,
    delivered: true,
    delivery: "send_input",
    attempt: 1,
    provider: "simulated",
  });
  await plane.close("completed");

  for (
    const dir of [
      root.stateRoot,
      paths.dir,
      paths.requests,
      paths.outcomes,
      paths.archive,
      paths.interventions,
    ]
  ) {
    assert.equal(await mode(dir), 0o700, `mode of "${dir}"`);
  }
  for (
    const file of [
      paths.snapshot,
      paths.events,
      paths.log,
      join(paths.outcomes, `${request_id}.json`),
      join(paths.interventions, "01.jsonl"),
    ]
  ) {
    assert.equal(await mode(file), 0o600, `mode of "${file}"`);
  }
  assert.deepEqual(root.warnings, []);
});

Deno.test("openPlane() writes a running snapshot with every field DESIGN §5 names", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a", { max_steers: 5 });
  const snap = await readSnapshot(root.paths.snapshot);
  for (const field of SNAPSHOT_FIELDS) {
    assert.ok(field in snap, `snapshot lacks "${field}"`);
  }
  assert.deepEqual(Object.keys(snap).sort(), [...SNAPSHOT_FIELDS].sort());
  assert.equal(snap.v, 1);
  assert.equal(snap.run_id, "run-a");
  assert.equal(snap.status, "running");
  assert.equal(snap.packet, "test-packet");
  assert.equal(snap.packet_dir, join(root.stateRoot, ".."));
  assert.equal(snap.provider, "simulated");
  assert.equal(snap.model, "sim-1");
  assert.equal(snap.prompt_id, null);
  assert.equal(snap.attempt, null);
  assert.equal(snap.event_count, 0);
  assert.equal(snap.last_seq, 0);
  assert.equal(snap.max_steers, 5);
  assert.equal(snap.pid, Deno.pid);
  assert.deepEqual(snap.view, { ...DEFAULT_VIEW });
  assert.ok(!Number.isNaN(Date.parse(snap.run_started_at)));
  assert.ok(!Number.isNaN(Date.parse(snap.updated_at)));
  assert.deepEqual(plane.opened, {
    last_seq: 0,
    view: {},
    delivered_steers: {},
  });
  await plane.close("completed");
});

Deno.test("close() writes the final status and counts into the snapshot", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { attempt: 2, mode: "retry" }));
  await plane.observe(runEvent("run-a", 1, "tool_call_started"));
  await plane.observe(runEvent("run-a", 2, "run_finished", {
    status: "failed",
  }, null));
  await plane.close("failed");
  const snap = await readSnapshot(root.paths.snapshot);
  assert.equal(snap.status, "failed");
  assert.equal(snap.event_count, 2);
  assert.equal(snap.last_seq, 2);
  assert.equal(snap.prompt_id, "01");
  assert.equal(snap.attempt, 2);
  assert.equal(snap.mode, "retry");
  assert.equal(snap.tool_count, 1);
});

Deno.test("viewChanged() shows the new view in the snapshot file at once", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.viewChanged({ ...DEFAULT_VIEW, tool_output: "full" });
  const snap = await readSnapshot(root.paths.snapshot);
  assert.equal(snap.view.tool_output, "full");
  await plane.close("completed");
});

// --- the event stream ---------------------------------------------------

Deno.test("observe() appends exactly the event's JSON line to events.jsonl", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const first = runEvent("run-a", 1, "message_streamed", {
    delta: 'héllo \u2028 "quoted"\n',
    kind: "text",
  });
  const second = runEvent("run-a", 2, "tool_call_started", {
    tool_name: "Edit",
    tool_call_id: "t1",
    tool_input: {},
  });
  await plane.observe(first);
  await plane.observe(second);
  await plane.close("completed");
  assert.equal(
    await Deno.readTextFile(root.paths.events),
    JSON.stringify(first) + "\n" + JSON.stringify(second) + "\n",
  );
});

Deno.test("openPlane() with a new run id moves the previous events.jsonl to events/<old id>.jsonl byte for byte", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  await a.promptStarted(promptStart());
  for (let seq = 1; seq <= 3; seq++) {
    await a.observe(runEvent("run-a", seq, "message_streamed", {
      delta: `part ${seq} ✓`,
      kind: "text",
    }));
  }
  await a.close("interrupted");
  const before = await Deno.readFile(root.paths.events);
  assert.ok(before.length > 0);

  const b = await root.open("run-b");
  assert.deepEqual(
    await Deno.readFile(join(root.paths.archive, "run-a.jsonl")),
    before,
  );
  assert.equal((await Deno.readFile(root.paths.events)).length, 0);
  assert.equal(b.opened.last_seq, 0);
  assert.equal(b.current.event_count, 0);
  await b.close("completed");
});

Deno.test("events() of a new run does not see the previous run's events", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  for (let seq = 1; seq <= 4; seq++) {
    await a.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  await a.close("interrupted");
  const b = await root.open("run-b");
  await b.observe(runEvent("run-b", 1, "run_started"));
  await b.observe(runEvent("run-b", 2, "run_finished", {
    status: "completed",
  }, null));
  const seen = await Array.fromAsync(events(root.ref("run-b")));
  assert.deepEqual(
    seen.map((e) => [e.run_id, e.seq, e.type]),
    [["run-b", 1, "run_started"], ["run-b", 2, "run_finished"]],
  );
  await b.close("completed");
});

Deno.test("openPlane() with the same run id appends to its events and continues its seq", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  for (let seq = 1; seq <= 3; seq++) {
    await first.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  await first.close("interrupted");
  const before = await Deno.readFile(root.paths.events);

  const second = await root.open("run-a");
  assert.equal(second.opened.last_seq, 3);
  assert.equal(second.current.last_seq, 3);
  assert.equal(second.current.event_count, 3);
  assert.deepEqual(await listNames(root.paths.archive), []);
  const next = runEvent("run-a", 4, "tool_call_started");
  await second.observe(next);
  await second.close("completed");
  const after = await Deno.readFile(root.paths.events);
  assert.deepEqual(after.subarray(0, before.length), before);
  assert.equal(
    new TextDecoder().decode(after.subarray(before.length)),
    JSON.stringify(next) + "\n",
  );
});

Deno.test("openPlane() with the same run id cuts a torn final line before appending", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  for (let seq = 1; seq <= 2; seq++) {
    await first.observe(runEvent("run-a", seq, "tool_call_started"));
  }
  await first.close("interrupted");
  const complete = await Deno.readTextFile(root.paths.events);
  await Deno.writeTextFile(root.paths.events, '{"v":1,"seq":3,"at":"20', {
    append: true,
  });

  const second = await root.open("run-a");
  assert.equal(second.opened.last_seq, 2);
  assert.equal(await Deno.readTextFile(root.paths.events), complete);
  const next = runEvent("run-a", 3, "run_started");
  await second.observe(next);
  await second.close("completed");
  assert.equal(
    await Deno.readTextFile(root.paths.events),
    complete + JSON.stringify(next) + "\n",
  );
});

Deno.test("openPlane() with the same run id replays the view changes its earlier process applied", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  await writeRequest(root.ref("run-a"), "set_view", { tool_output: "full" });
  await writeRequest(root.ref("run-a"), "set_view", { thinking: "hide" });
  assert.equal((await drainRequests(first, root.paths, true)).length, 2);
  await first.close("interrupted");

  const second = await root.open("run-a");
  assert.deepEqual(second.opened.view, {
    tool_output: "full",
    thinking: "hide",
  });
  assert.deepEqual(second.current.view, {
    ...DEFAULT_VIEW,
    tool_output: "full",
    thinking: "hide",
  });
  await second.close("completed");
});

// --- the snapshot's counters ----------------------------------------------

Deno.test("observe() folds tool calls, events and the last seq into the snapshot", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "run_started"));
  await plane.observe(runEvent("run-a", 2, "tool_call_started"));
  await plane.observe(runEvent("run-a", 3, "tool_call_completed"));
  await plane.observe(runEvent("run-a", 4, "tool_call_started"));
  const snap = plane.current;
  assert.equal(snap.tool_count, 2);
  assert.equal(snap.event_count, 4);
  assert.equal(snap.last_seq, 4);
  await plane.close("completed");
});

Deno.test("observe() takes token_usage_updated as running totals per session and adds the totals of successive sessions", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  let seq = 0;
  const tokens = (input: number, output: number) =>
    plane.observe(runEvent("run-a", ++seq, "token_usage_updated", {
      input_tokens: input,
      output_tokens: output,
    }));
  await plane.observe(runEvent("run-a", ++seq, "run_started"));
  await tokens(10, 5);
  await tokens(30, 12);
  assert.equal(plane.current.input_tokens, 30);
  assert.equal(plane.current.output_tokens, 12);
  // A resumed session counts from zero again; its totals add to the first's.
  await plane.observe(runEvent("run-a", ++seq, "run_started"));
  assert.equal(plane.current.input_tokens, 30);
  await tokens(7, 3);
  await tokens(9, 4);
  assert.equal(plane.current.input_tokens, 39);
  assert.equal(plane.current.output_tokens, 16);
  await plane.close("completed");
  const snap = await readSnapshot(root.paths.snapshot);
  assert.equal(snap.input_tokens, 39);
  assert.equal(snap.output_tokens, 16);
});

Deno.test("promptStarted() names the attempt and resets the per-attempt counters", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "run_started"));
  await plane.observe(runEvent("run-a", 2, "tool_call_started"));
  await plane.observe(runEvent("run-a", 3, "token_usage_updated", {
    input_tokens: 100,
    output_tokens: 50,
  }));
  await plane.promptStarted(
    promptStart("01", { attempt: 2, mode: "repair", max_steers: 2 }),
  );
  const snap = await readSnapshot(root.paths.snapshot);
  assert.equal(snap.prompt_id, "01");
  assert.equal(snap.prompt_name, "prompt 01");
  assert.equal(snap.attempt, 2);
  assert.equal(snap.mode, "repair");
  assert.equal(snap.max_steers, 2);
  assert.equal(snap.tool_count, 0);
  assert.equal(snap.input_tokens, 0);
  assert.equal(snap.output_tokens, 0);
  assert.equal(snap.event_count, 3);
  assert.equal(snap.last_seq, 3);
  assert.ok(snap.prompt_started_at !== null);
  await plane.observe(runEvent("run-a", 4, "token_usage_updated", {
    input_tokens: 4,
    output_tokens: 2,
  }));
  assert.equal(plane.current.input_tokens, 4);
  await plane.close("completed");
});

// --- requests -------------------------------------------------------------

Deno.test("boundary() applies a set_view request: command, receipt, log entry, request removed", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { attempt: 2, mode: "retry" }));
  const { request_id } = await writeRequest(
    root.ref("run-a"),
    "set_view",
    { tool_output: "full", log_mode: "verbose" },
    { author: "alice" },
  );

  const commands = await plane.boundary({ idle: false });
  assert.deepEqual(commands, [{
    command: "set_view",
    view: { tool_output: "full", log_mode: "verbose" },
    request_id,
    author: "alice",
  }]);

  const receipt = JSON.parse(
    await Deno.readTextFile(join(paths.outcomes, `${request_id}.json`)),
  );
  assert.deepEqual(Object.keys(receipt).sort(), RECEIPT_KEYS);
  assert.equal(receipt.request_id, request_id);
  assert.equal(receipt.run_id, "run-a");
  assert.equal(receipt.command, "set_view");
  assert.equal(receipt.outcome, "applied");
  assert.equal(receipt.reason, null);
  assert.ok(!Number.isNaN(Date.parse(receipt.recorded_at)));

  const entries = await logEntriesOf(paths, request_id);
  assert.equal(entries.length, 1);
  const entry = entries[0]!;
  assert.deepEqual(Object.keys(entry).sort(), LOG_KEYS);
  assert.equal(entry.v, 1);
  assert.ok(!Number.isNaN(Date.parse(entry.at)));
  assert.equal(entry.run_id, "run-a");
  assert.equal(entry.request_id, request_id);
  assert.equal(entry.command, "set_view");
  assert.deepEqual(entry.params, { tool_output: "full", log_mode: "verbose" });
  assert.equal(entry.author, "alice");
  assert.equal(entry.outcome, "applied");
  assert.equal(entry.reason, null);
  assert.equal(entry.prompt_id, "01");
  assert.equal(entry.attempt, 2);

  assert.deepEqual(await listNames(paths.requests), []);
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  assert.equal((await logEntriesOf(paths, request_id)).length, 1);
  await plane.close("completed");
});

Deno.test("boundary() returns two set_view requests in the order they were written", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const first = await writeRequest(root.ref("run-a"), "set_view", {
    tool_output: "full",
  });
  const second = await writeRequest(root.ref("run-a"), "set_view", {
    tool_output: "none",
  });
  const commands = await drainRequests(plane, root.paths, true);
  assert.deepEqual(
    commands.map((c) => [c.request_id, c.command === "set_view" && c.view]),
    [
      [first.request_id, { tool_output: "full" }],
      [second.request_id, { tool_output: "none" }],
    ],
  );
  const log = await readJsonl<LogEntry>(root.paths.log);
  assert.deepEqual(log.map((e) => e.request_id), [
    first.request_id,
    second.request_id,
  ]);
  await plane.close("completed");
});

interface RejectionCase {
  /** What the request is, in the test name. */
  what: string;
  /** Writes the request as `name` into `requests/`. */
  write(requests: string, name: string): Promise<void>;
  /** The reason the log entry and the receipt must give. */
  reason: RegExp;
  /** The command the log entry must record. */
  command: string;
}

const valid = (extra: Record<string, unknown> = {}, params: unknown = {
  tool_output: "full",
}) =>
  JSON.stringify({
    v: 1,
    id: "x",
    command: "set_view",
    params,
    run_id: "run-a",
    author: "tester",
    issued_at: new Date().toISOString(),
    ...extra,
  });

const REJECTIONS: RejectionCase[] = [
  {
    what: "a file that is not JSON",
    write: (dir, name) => Deno.writeTextFile(join(dir, name), "{not json"),
    reason: /^not JSON: /,
    command: "unparseable",
  },
  {
    what: "a JSON array",
    write: (dir, name) => Deno.writeTextFile(join(dir, name), "[1, 2]"),
    reason: /^not a JSON object \(an array\)$/,
    command: "unparseable",
  },
  {
    what: "an empty file",
    write: (dir, name) => Deno.writeTextFile(join(dir, name), ""),
    reason: /^not JSON: /,
    command: "unparseable",
  },
  {
    what: "a file over 64 KiB",
    write: (dir, name) =>
      Deno.writeTextFile(
        join(dir, name),
        valid({ padding: "x".repeat(MAX_REQUEST_BYTES) }),
      ),
    reason: new RegExp(`^too large: \\d+ bytes, the limit is 65536$`),
    command: "unknown",
  },
  {
    what: "a symbolic link",
    write: async (dir, name) => {
      const target = join(dir, "..", "elsewhere.json");
      await Deno.writeTextFile(target, valid());
      await Deno.symlink(target, join(dir, name));
    },
    reason: /^not a regular file \(a symbolic link\)$/,
    command: "unknown",
  },
  {
    what: "a directory",
    write: async (dir, name) => {
      await Deno.mkdir(join(dir, name));
      await Deno.writeTextFile(join(dir, name, "inner.json"), valid());
    },
    reason: /^not a regular file \(a directory\)$/,
    command: "unknown",
  },
  {
    what: "an unknown command",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({ command: "frobnicate" })),
    reason: /^unknown command "frobnicate": expected set_view or steer$/,
    command: "frobnicate",
  },
  {
    what: "a request with no command",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({ command: undefined })),
    reason: /has no command/,
    command: "unknown",
  },
  {
    what: "a request with no run_id",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({ run_id: undefined })),
    reason: /names no run_id/,
    command: "set_view",
  },
  {
    what: "a request for another run",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({ run_id: "run-other" })),
    reason: /targets run run-other, but this is run run-a/,
    command: "set_view",
  },
  {
    what: "params that are not an object",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({}, "full")),
    reason: /params must be a JSON object/,
    command: "set_view",
  },
  {
    what: "a bad view value",
    write: (dir, name) =>
      Deno.writeTextFile(
        join(dir, name),
        valid({}, { tool_output: "everything" }),
      ),
    reason:
      /Invalid tool_output "everything": expected one of none, summary, preview, full/,
    command: "set_view",
  },
  {
    what: "an unknown view setting",
    write: (dir, name) =>
      Deno.writeTextFile(join(dir, name), valid({}, { colour: "red" })),
    reason:
      /Unknown view setting "colour": expected one of log_mode, tool_output, thinking, diff/,
    command: "set_view",
  },
  {
    what: "an empty steer",
    write: (dir, name) =>
      Deno.writeTextFile(
        join(dir, name),
        valid({ command: "steer" }, { text: "  \n " }),
      ),
    reason: /^empty steer/,
    command: "steer",
  },
];

for (const rejection of REJECTIONS) {
  Deno.test(`boundary() rejects ${rejection.what} in requests/ with a logged reason and removes it`, async () => {
    await using root = await makeControlRoot();
    const { paths } = root;
    const plane = await root.open("run-a");
    await plane.promptStarted(promptStart());
    const id = "20261130T025200123Z-rejectme00";
    await rejection.write(paths.requests, `${id}.json`);

    assert.deepEqual(await plane.boundary({ idle: false }), []);

    const entries = await logEntriesOf(paths, id);
    assert.equal(entries.length, 1, JSON.stringify(entries));
    const entry = entries[0]!;
    assert.deepEqual(Object.keys(entry).sort(), LOG_KEYS);
    assert.equal(entry.outcome, "rejected");
    assert.equal(entry.command, rejection.command);
    assert.equal(entry.run_id, "run-a");
    assert.match(entry.reason ?? "", rejection.reason);
    const receipt = JSON.parse(
      await Deno.readTextFile(join(paths.outcomes, `${id}.json`)),
    );
    assert.equal(receipt.outcome, "rejected");
    assert.equal(receipt.reason, entry.reason);
    assert.deepEqual(await listNames(paths.requests), []);
    assert.deepEqual(root.warnings, []);
    await plane.close("completed");
  });
}

Deno.test("boundary() removes a symlinked request without touching its target", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const target = join(root.dir, "target.json");
  const text = requestJson("t", "run-a", "set_view", { tool_output: "full" });
  await Deno.writeTextFile(target, text);
  await Deno.symlink(target, join(root.paths.requests, "t.json"));
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  assert.equal(await Deno.readTextFile(target), text);
  assert.deepEqual(await listNames(root.paths.requests), []);
  await plane.close("completed");
});

Deno.test("boundary() skips dot-files in requests/ as writes in flight", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const plane = await root.open("run-a");
  const id = "20261130T025200123Z-inflight00";
  const temp = await writeRawRequest(
    paths,
    `.${id}.json.abcd1234.tmp`,
    requestJson(id, "run-a", "set_view", { diff: "full" }),
  );
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  assert.ok(await exists(temp));
  assert.deepEqual(await readJsonl(paths.log), []);
  assert.deepEqual(await listNames(paths.outcomes), []);

  // The writer finishes: the request is consumed at the next boundary.
  await Deno.rename(temp, join(paths.requests, `${id}.json`));
  const commands = await plane.boundary({ idle: false });
  assert.deepEqual(commands.map((c) => c.request_id), [id]);
  await plane.close("completed");
});

Deno.test("boundary() finishes a request whose receipt already exists without applying it again", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const plane = await root.open("run-a");
  const id = "20261130T025200123Z-decided000";
  await writeRawRequest(
    paths,
    `${id}.json`,
    requestJson(id, "run-a", "set_view", { diff: "full" }),
  );
  await Deno.writeTextFile(
    join(paths.outcomes, `${id}.json`),
    JSON.stringify({
      request_id: id,
      run_id: "run-a",
      command: "set_view",
      outcome: "applied",
      reason: null,
      recorded_at: new Date().toISOString(),
    }),
  );
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  const entries = await logEntriesOf(paths, id);
  assert.equal(entries.length, 1);
  assert.equal(entries[0]!.outcome, "applied");
  assert.deepEqual(entries[0]!.params, { diff: "full" });
  assert.deepEqual(await listNames(paths.requests), []);
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  assert.equal((await logEntriesOf(paths, id)).length, 1);
  await plane.close("completed");
});

for (const logged of [false, true]) {
  Deno.test(
    `openPlane() finishes a request a killed runner left with a receipt${
      logged ? " and a log entry" : ""
    }, logging it exactly once`,
    async () => {
      await using root = await makeControlRoot();
      const { paths } = root;
      const first = await root.open("run-a");
      await first.close("interrupted");
      const id = "20261130T025200123Z-crashed000";
      await writeRawRequest(
        paths,
        `${id}.json`,
        requestJson(id, "run-a", "set_view", { diff: "none" }, {
          author: "bob",
        }),
      );
      const receipt = {
        request_id: id,
        run_id: "run-a",
        command: "set_view",
        outcome: "applied",
        reason: null,
        recorded_at: new Date().toISOString(),
      };
      await Deno.writeTextFile(
        join(paths.outcomes, `${id}.json`),
        JSON.stringify(receipt),
      );
      if (logged) {
        await Deno.writeTextFile(
          paths.log,
          JSON.stringify({
            v: 1,
            at: new Date().toISOString(),
            run_id: "run-a",
            request_id: id,
            command: "set_view",
            params: { diff: "none" },
            author: "bob",
            outcome: "applied",
            reason: null,
            prompt_id: null,
            attempt: null,
          }) + "\n",
          { append: true },
        );
      }

      const second = await root.open("run-a");
      assert.deepEqual(await listNames(paths.requests), []);
      const entries = await logEntriesOf(paths, id);
      assert.equal(entries.length, 1);
      assert.equal(entries[0]!.outcome, "applied");
      assert.equal(entries[0]!.author, "bob");
      assert.deepEqual(await second.boundary({ idle: false }), []);
      await second.close("completed");
      assert.equal((await logEntriesOf(paths, id)).length, 1);
    },
  );
}

// --- steering ---------------------------------------------------------------

Deno.test('boundary() rejects a steer while no prompt is running: "no prompt is running"', async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const before = await writeRequest(root.ref("run-a"), "steer", {
    text: "go",
  });
  assert.deepEqual(await plane.boundary({ idle: true }), []);

  // After a prompt completes, nothing runs until the next one starts.
  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "prompt_completed", {
    prompt_id: "01",
    status: "completed",
    reason: null,
  }));
  const after = await writeRequest(root.ref("run-a"), "steer", {
    text: "go",
  });
  assert.deepEqual(await plane.boundary({ idle: true }), []);

  for (const { request_id } of [before, after]) {
    const [entry] = await logEntriesOf(root.paths, request_id);
    assert.equal(entry?.outcome, "rejected");
    assert.match(entry?.reason ?? "", /no prompt is running/);
  }
  await plane.close("completed");
});

Deno.test("boundary() rejects a steer for a prompt other than the running one", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01"));
  const { request_id } = await writeRequest(
    root.ref("run-a"),
    "steer",
    { text: "go" },
    { prompt_id: "02" },
  );
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  const [entry] = await logEntriesOf(root.paths, request_id);
  assert.equal(entry?.outcome, "rejected");
  assert.match(
    entry?.reason ?? "",
    /the steer is for prompt 02, but prompt 01 is running/,
  );
  await plane.close("completed");
});

Deno.test("boundary() accepts a steer for the running prompt and logs it accepted", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01"));
  const { request_id } = await writeRequest(
    root.ref("run-a"),
    "steer",
    { text: "  prefer small commits  " },
    { prompt_id: "01", author: "carol" },
  );
  assert.deepEqual(await plane.boundary({ idle: false }), [{
    command: "steer",
    text: "prefer small commits",
    prompt_id: "01",
    request_id,
    author: "carol",
  }]);
  const entries = await logEntriesOf(root.paths, request_id);
  assert.deepEqual(entries.map((e) => [e.outcome, e.params, e.prompt_id]), [
    ["accepted", { text: "prefer small commits" }, "01"],
  ]);
  await plane.close("completed");
});

Deno.test("boundary() counts accepted-and-pending steers against the budget: 4 steers with max_steers 3 → 3 accepted, 1 rejected", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { max_steers: 3 }));
  const ids: string[] = [];
  for (let n = 1; n <= 4; n++) {
    ids.push(
      (await writeRequest(root.ref("run-a"), "steer", { text: `steer ${n}` }))
        .request_id,
    );
  }
  const commands = steerCommands(await drainRequests(plane, root.paths));
  assert.deepEqual(commands.map((c) => c.request_id), ids.slice(0, 3));
  for (const id of ids.slice(0, 3)) {
    assert.deepEqual(
      (await logEntriesOf(root.paths, id)).map((e) => e.outcome),
      ["accepted"],
    );
  }
  const [refused] = await logEntriesOf(root.paths, ids[3]!);
  assert.equal(refused?.outcome, "rejected");
  assert.match(refused?.reason ?? "", /budget spent/);
  assert.match(refused?.reason ?? "", /3\/3/);
  await plane.close("completed");
});

Deno.test("steerSettled() of a delivered steer appends an intervention record and logs it applied", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { attempt: 2, mode: "retry" }));
  const { request_id } = await writeRequest(root.ref("run-a"), "steer", {
    text: "use the helper",
  }, { author: "dave" });
  const [command] = steerCommands(await plane.boundary({ idle: false }));
  assert.ok(command);
  await plane.steerSettled({
    command,
    delivered: true,
    delivery: "interrupt_and_resume",
    mechanism: "resume",
    acknowledged_at: "2026-12-05T12:00:00.000Z",
    attempt: 2,
    provider: "simulated",
  });

  const records = await readJsonl(join(root.paths.interventions, "01.jsonl"));
  assert.equal(records.length, 1);
  const record = records[0]!;
  assert.deepEqual(Object.keys(record).sort(), [
    "acknowledged_at",
    "at",
    "attempt",
    "author",
    "delivery",
    "lane",
    "mechanism",
    "prompt",
    "request_id",
    "run_id",
    "text",
  ]);
  assert.equal(record.mechanism, "resume");
  assert.equal(record.acknowledged_at, "2026-12-05T12:00:00.000Z");
  assert.equal(record.prompt, "01");
  assert.equal(record.attempt, 2);
  assert.equal(record.author, "dave");
  assert.equal(record.text, "use the helper");
  assert.equal(record.lane, "simulated");
  assert.equal(record.delivery, "interrupt_and_resume");
  assert.equal(record.run_id, "run-a");
  assert.equal(record.request_id, request_id);
  assert.ok(!Number.isNaN(Date.parse(String(record.at))));

  const entries = await logEntriesOf(root.paths, request_id);
  assert.deepEqual(entries.map((e) => e.outcome), ["accepted", "applied"]);
  assert.deepEqual(entries[1]!.params, {
    text: "use the helper",
    delivery: "interrupt_and_resume",
    mechanism: "resume",
  });
  assert.equal(entries[1]!.reason, null);
  assert.equal(entries[1]!.attempt, 2);
  assert.equal(plane.current.steer_count, 1);
  assert.equal((await readSnapshot(root.paths.snapshot)).steer_count, 1);
  await plane.close("completed");
});

Deno.test("steerSettled() of a refused steer logs it rejected and frees its budget", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { max_steers: 3 }));
  for (let n = 1; n <= 3; n++) {
    await writeRequest(root.ref("run-a"), "steer", { text: `steer ${n}` });
  }
  const accepted = steerCommands(await drainRequests(plane, root.paths));
  assert.equal(accepted.length, 3);
  await plane.steerSettled({
    command: accepted[0]!,
    delivered: false,
    reason: "the session already ended",
    attempt: 1,
    provider: "simulated",
  });
  const entries = await logEntriesOf(root.paths, accepted[0]!.request_id);
  assert.deepEqual(
    entries.map((e) => [e.outcome, e.reason]),
    [["accepted", null], ["rejected", "the session already ended"]],
  );
  assert.deepEqual(
    await readJsonl(join(root.paths.interventions, "01.jsonl")),
    [],
  );
  assert.equal(plane.current.steer_count, 0);

  const { request_id } = await writeRequest(root.ref("run-a"), "steer", {
    text: "steer 4",
  });
  assert.deepEqual(
    steerCommands(await plane.boundary({ idle: false })).map((c) =>
      c.request_id
    ),
    [request_id],
  );
  await plane.close("completed");
});

Deno.test("promptStarted() carries the steers delivered to a prompt into its next attempt's budget", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("01", { max_steers: 2 }));
  for (let n = 1; n <= 2; n++) {
    await writeRequest(root.ref("run-a"), "steer", { text: `steer ${n}` });
  }
  for (
    const command of steerCommands(await drainRequests(plane, root.paths))
  ) {
    await plane.steerSettled({
      command,
      delivered: true,
      delivery: "send_input",
      attempt: 1,
      provider: "simulated",
    });
  }
  await plane.promptStarted(
    promptStart("01", { attempt: 2, mode: "retry", max_steers: 2 }),
  );
  assert.equal(plane.current.steer_count, 2);
  const { request_id } = await writeRequest(root.ref("run-a"), "steer", {
    text: "one more",
  });
  // No steer to deliver: the runner is told to raise attention instead.
  assert.deepEqual(
    (await plane.boundary({ idle: false })).map((c) => c.command),
    ["attention"],
  );
  const [entry] = await logEntriesOf(root.paths, request_id);
  assert.match(entry?.reason ?? "", /budget spent: 2\/2/);
  await plane.close("completed");
});

// --- close and reopen ---------------------------------------------------------

Deno.test("close() rejects the requests still pending with a reason and removes them", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const view = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  const steer = await writeRequest(root.ref("run-a"), "steer", {
    text: "late",
  });
  const bad = "20991231T000000000Z-badvalue00";
  await writeRawRequest(
    paths,
    `${bad}.json`,
    requestJson(bad, "run-a", "set_view", { diff: "colourful" }),
  );
  await plane.close("completed");

  for (const id of [view.request_id, steer.request_id]) {
    const entries = await logEntriesOf(paths, id);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.outcome, "rejected");
    assert.match(
      entries[0]!.reason ?? "",
      /the run ended \(completed\) before the request was applied/,
    );
    const receipt = JSON.parse(
      await Deno.readTextFile(join(paths.outcomes, `${id}.json`)),
    );
    assert.equal(receipt.outcome, "rejected");
  }
  const [badEntry] = await logEntriesOf(paths, bad);
  assert.match(badEntry?.reason ?? "", /Invalid diff "colourful"/);
  assert.deepEqual(await listNames(paths.requests), []);
  assert.equal((await readSnapshot(paths.snapshot)).status, "completed");
});

Deno.test("boundary() after close() consumes nothing", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.close("completed");
  const request_id = "20991231T000000000Z-afterclose";
  await writeRawRequest(
    root.paths,
    `${request_id}.json`,
    requestJson(request_id, "run-a", "set_view", { diff: "full" }),
  );
  assert.deepEqual(await plane.boundary({ idle: true }), []);
  assert.deepEqual(await listNames(root.paths.requests), [
    `${request_id}.json`,
  ]);
});

Deno.test("openPlane() with the same run id gives accepted-but-undelivered steers one final entry each", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const first = await root.open("run-a");
  await first.promptStarted(promptStart("01"));
  for (const text of ["delivered", "recorded before a crash", "never sent"]) {
    await writeRequest(root.ref("run-a"), "steer", { text });
  }
  const [delivered, recorded, unsent] = steerCommands(
    await drainRequests(first, paths),
  );
  assert.ok(delivered && recorded && unsent);
  await first.steerSettled({
    command: delivered,
    delivered: true,
    delivery: "send_input",
    attempt: 1,
    provider: "simulated",
  });
  // A runner killed right after recording an intervention, before logging it.
  await Deno.writeTextFile(
    join(paths.interventions, "01.jsonl"),
    JSON.stringify({
      at: new Date().toISOString(),
      prompt: "01",
      attempt: 1,
      author: recorded.author,
      text: recorded.text,
      lane: "simulated",
      delivery: "send_input",
      run_id: "run-a",
      request_id: recorded.request_id,
    }) + "\n",
    { append: true },
  );
  await first.close("interrupted");

  const second = await root.open("run-a");
  assert.deepEqual(second.opened.delivered_steers, { "01": 2 });
  const finals = async (id: string) =>
    (await logEntriesOf(paths, id)).map((e) => e.outcome);
  assert.deepEqual(await finals(delivered.request_id), [
    "accepted",
    "applied",
  ]);
  assert.deepEqual(await finals(recorded.request_id), [
    "accepted",
    "applied",
  ]);
  assert.deepEqual(await finals(unsent.request_id), ["accepted", "rejected"]);
  const [, unsentFinal] = await logEntriesOf(paths, unsent.request_id);
  assert.match(unsentFinal?.reason ?? "", /stopped before the steer/);
  await second.close("interrupted");

  // A third process adds nothing: every steer already has its final entry.
  const third = await root.open("run-a");
  await third.close("completed");
  assert.deepEqual(await finals(recorded.request_id), [
    "accepted",
    "applied",
  ]);
  assert.deepEqual(await finals(unsent.request_id), ["accepted", "rejected"]);
});

Deno.test("openPlane() of a new run gives the previous run's undelivered steers a final rejected entry", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  await first.promptStarted(promptStart("01"));
  const { request_id } = await writeRequest(root.ref("run-a"), "steer", {
    text: "pending",
  });
  assert.equal((await first.boundary({ idle: false })).length, 1);
  await first.close("interrupted");
  const second = await root.open("run-b");
  assert.deepEqual(
    (await logEntriesOf(root.paths, request_id)).map((e) => e.outcome),
    ["accepted", "rejected"],
  );
  await second.close("completed");
});

// --- a broken control directory ---------------------------------------------

Deno.test("openPlane() on a broken control directory warns and turns every hook into a no-op", async () => {
  await using root = await makeControlRoot();
  await Deno.mkdir(root.stateRoot, { recursive: true });
  await Deno.writeTextFile(root.paths.dir, "not a directory\n");
  const plane = await root.open("run-a");
  assert.equal(root.warnings.length, 1);
  assert.match(root.warnings[0]!, /^control plane: disabled for this run/);

  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "run_started"));
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  await plane.steerSettled({
    command: {
      command: "steer",
      text: "x",
      prompt_id: "01",
      request_id: "r",
      author: "a",
    },
    delivered: true,
    delivery: "send_input",
    attempt: 1,
    provider: "simulated",
  });
  await plane.viewChanged({ ...DEFAULT_VIEW });
  await plane.close("completed");

  assert.equal(await Deno.readTextFile(root.paths.dir), "not a directory\n");
  assert.ok(!(await exists(root.paths.interventions)));
  assert.equal(root.warnings.length, 1);
});

// --- more crash recovery and robustness -------------------------------------

Deno.test("openPlane() gives a steer decided accepted before a crash (receipt only) exactly one final rejected entry", async () => {
  await using root = await makeControlRoot();
  const { paths } = root;
  const first = await root.open("run-a");
  await first.close("interrupted");
  const id = "20261130T025200123Z-steercrash";
  await writeRawRequest(
    paths,
    `${id}.json`,
    requestJson(id, "run-a", "steer", { text: "go" }),
  );
  await Deno.writeTextFile(
    join(paths.outcomes, `${id}.json`),
    JSON.stringify({
      request_id: id,
      run_id: "run-a",
      command: "steer",
      outcome: "accepted",
      reason: null,
      recorded_at: new Date().toISOString(),
    }),
  );
  const second = await root.open("run-a");
  await second.promptStarted(promptStart());
  assert.deepEqual(await second.boundary({ idle: false }), []);
  assert.deepEqual(
    (await logEntriesOf(paths, id)).map((e) => e.outcome),
    ["accepted", "rejected"],
  );
  assert.deepEqual(await listNames(paths.requests), []);
  await second.close("completed");
});

Deno.test("boundary() rejects a named pipe in requests/ without blocking on it", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const fifo = join(root.paths.requests, "fifo.json");
  const made = await new Deno.Command("mkfifo", { args: [fifo] }).output();
  assert.ok(made.success, "mkfifo failed");
  assert.deepEqual(await plane.boundary({ idle: false }), []);
  const [entry] = await logEntriesOf(root.paths, "fifo");
  assert.equal(entry?.outcome, "rejected");
  assert.match(entry?.reason ?? "", /not a regular file \(a special file\)/);
  assert.deepEqual(await listNames(root.paths.requests), []);
  await plane.close("completed");
});

Deno.test("boundary() writes the folded counters into the snapshot file while events flow", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await plane.observe(runEvent("run-a", 1, "tool_call_started"));
  await plane.observe(runEvent("run-a", 2, "tool_call_started"));
  const snap = await waitFor(
    "the snapshot to show the tool calls",
    async () => {
      await plane.boundary({ idle: false });
      const current = await readSnapshot(root.paths.snapshot);
      return current.tool_count === 2 ? current : null;
    },
    10_000,
  );
  assert.equal(snap.last_seq, 2);
  assert.equal(snap.event_count, 2);
  await plane.close("completed");
});

Deno.test("openPlane() keeps the snapshot's heartbeat fresh while nothing happens", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const first = (await readSnapshot(root.paths.snapshot)).updated_at;
  await waitFor("a heartbeat", async () => {
    const now = (await readSnapshot(root.paths.snapshot)).updated_at;
    return now !== first;
  }, 10_000);
  await plane.close("completed");
});

Deno.test({
  name:
    "openPlane() of a new run logs applied a steer whose intervention a killed runner recorded",
  fn: async () => {
    await using root = await makeControlRoot();
    const { paths } = root;
    const first = await root.open("run-a");
    await first.promptStarted(promptStart("01"));
    await writeRequest(root.ref("run-a"), "steer", { text: "delivered" });
    const [command] = steerCommands(await first.boundary({ idle: false }));
    assert.ok(command);
    // Killed right after the intervention was recorded, before the log entry.
    await Deno.mkdir(paths.interventions, { recursive: true });
    await Deno.writeTextFile(
      join(paths.interventions, "01.jsonl"),
      JSON.stringify({
        at: new Date().toISOString(),
        prompt: "01",
        attempt: 1,
        author: command.author,
        text: command.text,
        lane: "simulated",
        delivery: "send_input",
        run_id: "run-a",
        request_id: command.request_id,
      }) + "\n",
    );
    await first.close("interrupted");
    const second = await root.open("run-b");
    assert.deepEqual(
      (await logEntriesOf(paths, command.request_id)).map((e) => e.outcome),
      ["accepted", "applied"],
    );
    await second.close("completed");
  },
});

Deno.test({
  name:
    "steerSettled() still logs a delivered steer applied when its intervention record cannot be written",
  fn: async () => {
    await using root = await makeControlRoot();
    const plane = await root.open("run-a");
    await plane.promptStarted(promptStart("01"));
    // Something that is not a directory where interventions/ should be.
    await Deno.writeTextFile(root.paths.interventions, "in the way\n");
    await writeRequest(root.ref("run-a"), "steer", { text: "go" });
    const [command] = steerCommands(await plane.boundary({ idle: false }));
    assert.ok(command);
    await plane.steerSettled({
      command,
      delivered: true,
      delivery: "send_input",
      attempt: 1,
      provider: "simulated",
    });
    assert.equal(root.warnings.length, 1);
    assert.match(root.warnings[0]!, /cannot record a steer/);
    assert.deepEqual(
      (await logEntriesOf(root.paths, command.request_id)).map((e) =>
        e.outcome
      ),
      ["accepted", "applied"],
    );
    await plane.close("completed");
  },
});

Deno.test({
  name:
    "openPlane() with a run id an intervening run displaced keeps its seq and its steer budget",
  fn: async () => {
    await using root = await makeControlRoot();
    const a = await root.open("run-a");
    await a.promptStarted(promptStart("01"));
    await a.observe(runEvent("run-a", 1, "run_started"));
    await a.observe(runEvent("run-a", 2, "tool_call_started"));
    await writeRequest(root.ref("run-a"), "steer", { text: "delivered" });
    const [command] = steerCommands(await a.boundary({ idle: false }));
    assert.ok(command);
    await a.steerSettled({
      command,
      delivered: true,
      delivery: "send_input",
      attempt: 1,
      provider: "simulated",
    });
    await a.close("interrupted");
    const b = await root.open("run-b");
    await b.close("completed");

    // `run --run-id run-a`: "a resumed run keeps its events, budgets and audit trail".
    const again = await root.open("run-a");
    assert.equal(again.opened.last_seq, 2);
    assert.deepEqual(again.opened.delivered_steers, { "01": 1 });
    await again.close("completed");
  },
});
