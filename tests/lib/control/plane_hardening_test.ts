/**
 * The control plane against hostile and unlucky state roots: planted links,
 * odd request names, floods, torn logs, leftovers of a killed runner, and
 * requests that race the end of a run.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  appendLogEntry,
  type LogEntry,
} from "../../../lib/control/log_entry.ts";
import { publishReceipt } from "../../../lib/control/receipt.ts";
import { receiptFileName } from "../../../lib/control/paths.ts";
import { log } from "../../../lib/control/read_log.ts";
import { writeRequest } from "../../../lib/control/request.ts";
import { requestOutcome } from "../../../lib/control/request_outcome.ts";
import { StateError } from "../../../lib/shared/errors.ts";
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

/** A canary directory beside the state root, with one file in it. */
async function makeCanary(dir: string): Promise<string> {
  const canary = join(dir, "canary");
  await Deno.mkdir(canary);
  await Deno.writeTextFile(join(canary, "bait.txt"), "untouched\n");
  return canary;
}

async function canaryNames(canary: string): Promise<string[]> {
  return await listNames(canary);
}

Deno.test("a link planted at control/log.jsonl is moved aside, logged and never appended to", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.symlink(join(canary, "bait.txt"), root.paths.log);
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.boundary({ idle: false });
  await plane.boundary({ idle: false });
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
  assert.ok((await Deno.lstat(root.paths.log)).isFile, "a real log again");
  const entries = await readJsonl<LogEntry>(root.paths.log);
  const refusal = entries.find((e) => e.command === "link_refused");
  assert.equal(refusal?.params.path, "control/log.jsonl");
  assert.equal(refusal?.params.target, join(canary, "bait.txt"));
  assert.match(refusal?.reason ?? "", /symbolic link .* never followed/);
  assert.equal(
    entries.filter((e) => e.request_id === request_id).map((e) => e.outcome)
      .join(),
    "applied",
  );
  const moved = (await listNames(root.paths.dir)).filter((n) =>
    n.startsWith("log.jsonl.link-refused-")
  );
  assert.equal(moved.length, 1);
  const linkWarnings = root.warnings.filter((w) => w.includes("log.jsonl"));
  assert.equal(linkWarnings.length, 1, root.warnings.join("\n"));
});

Deno.test("outcomes/ replaced by a directory link mid-run: receipts stay inside the state root", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.remove(root.paths.outcomes, { recursive: true });
  await Deno.symlink(canary, root.paths.outcomes);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    ids.push(
      (await writeRequest(root.ref("run-a"), "set_view", { diff: "full" }))
        .request_id,
    );
  }
  await drainRequests(plane, root.paths, true);
  assert.deepEqual(await canaryNames(canary), ["bait.txt"]);
  assert.ok((await Deno.lstat(root.paths.outcomes)).isDirectory);
  for (const id of ids) {
    assert.deepEqual(
      (await logEntriesOf(root.paths, id)).map((e) => e.outcome),
      ["applied"],
    );
    await Deno.stat(join(root.paths.outcomes, `${id}.json`));
  }
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("control/ itself replaced by a directory link mid-run: the snapshot and the log stay inside the state root", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.rename(root.paths.dir, join(root.dir, "control-moved"));
  await Deno.symlink(canary, root.paths.dir);
  await plane.observe(runEvent("run-a", 1, "run_started"));
  await plane.viewChanged({
    log_mode: "verbose",
    tool_output: "full",
    thinking: "show",
    diff: "stat",
  });
  await plane.boundary({ idle: true });
  await plane.close("completed");
  assert.deepEqual(await canaryNames(canary), ["bait.txt"]);
  const snapshot = JSON.parse(await Deno.readTextFile(root.paths.snapshot));
  assert.equal(snapshot.status, "completed");
  const names = await listNames(root.stateRoot);
  assert.ok(
    names.some((n) => n.startsWith("control.link-refused-")),
    names.join(),
  );
});

Deno.test("interventions/<p>.jsonl planted as a link: a delivered steer is recorded in a real file, the target untouched", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.mkdir(root.paths.interventions, { mode: 0o700 });
  const file = join(root.paths.interventions, "01.jsonl");
  await Deno.symlink(join(canary, "bait.txt"), file);
  await writeRequest(root.ref("run-a"), "steer", { text: "mind the gap" });
  const [steer] = await plane.boundary({ idle: false });
  assert.equal(steer?.command, "steer");
  await plane.steerSettled({
    command: steer as Extract<typeof steer, { command: "steer" }>,
    delivered: true,
    delivery: "send_input",
    attempt: 1,
    provider: "simulated",
  });
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
  const records = await readJsonl(file);
  assert.equal(records.length, 1);
  assert.equal(records[0]?.text, "mind the gap");
});

Deno.test("a request file with a 250-byte name gets its receipt and log line, and later requests are not held up", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const long = `${"r".repeat(245)}.json`;
  assert.equal(new TextEncoder().encode(long).length, 250);
  await writeRawRequest(
    root.paths,
    long,
    requestJson("long", "run-a", "set_view", { diff: "full" }),
  );
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    thinking: "hide",
  });
  const applied = await drainRequests(plane, root.paths, true);
  assert.equal(applied.length, 2);
  assert.deepEqual(await listNames(root.paths.requests), []);
  const longId = long.slice(0, -5);
  assert.equal((await logEntriesOf(root.paths, longId)).length, 1);
  assert.equal((await logEntriesOf(root.paths, request_id)).length, 1);
  const receipts = await listNames(root.paths.outcomes);
  assert.equal(receipts.length, 2);
  assert.ok(receipts.includes(await receiptFileName(long)));
});

Deno.test("request names that collide after sanitising each get their own receipt and log line", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const names = ["a b.json", "a_b.json", "é.json", "ü.json", "a-b"];
  for (const name of names) {
    await writeRawRequest(
      root.paths,
      name,
      requestJson(name, "run-a", "set_view", { diff: "none" }),
    );
  }
  await drainRequests(plane, root.paths, true);
  const receipts = await listNames(root.paths.outcomes);
  assert.equal(receipts.length, names.length, receipts.join());
  for (const name of names) {
    const id = name.endsWith(".json") ? name.slice(0, -5) : name;
    const entries = await logEntriesOf(root.paths, id);
    assert.equal(entries.length, 1, name);
    const receipt = JSON.parse(
      await Deno.readTextFile(
        join(root.paths.outcomes, await receiptFileName(name)),
      ),
    );
    assert.equal(receipt.request_id, id);
  }
});

Deno.test("a problem that repeats (outcomes/ is a file) is warned about once, however many requests and boundaries", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.remove(root.paths.outcomes, { recursive: true });
  await Deno.writeTextFile(root.paths.outcomes, "not a directory");
  for (let i = 0; i < 20; i++) {
    await writeRawRequest(
      root.paths,
      `2099010${String(i).padStart(2, "0")}.json`,
      requestJson(`r${i}`, "run-a", "set_view", { diff: "full" }),
    );
  }
  for (let i = 0; i < 20; i++) await plane.boundary({ idle: i % 2 === 0 });
  const about = root.warnings.filter((w) => /cannot process request/.test(w));
  assert.equal(about.length, 1, root.warnings.join("\n"));
  // Nothing was decided without its receipt: the queue waits intact.
  assert.equal((await listNames(root.paths.requests)).length, 20);
});

Deno.test("outcomes/ removed again and again is made again each time, with no warning printed per request", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const ids: string[] = [];
  for (let i = 0; i < 20; i++) {
    await Deno.remove(root.paths.outcomes, { recursive: true }).catch(() => {});
    ids.push(
      (await writeRequest(root.ref("run-a"), "set_view", { diff: "full" }))
        .request_id,
    );
    await plane.boundary({ idle: false });
  }
  assert.ok(root.warnings.length <= 1, root.warnings.join("\n"));
  for (const id of ids) {
    assert.equal((await logEntriesOf(root.paths, id)).length, 1, id);
  }
  await Deno.stat(join(root.paths.outcomes, `${ids.at(-1)}.json`));
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("a flood of requests is drained a bounded batch per busy boundary, in order, without losing one", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const ids: string[] = [];
  for (let i = 0; i < 100; i++) {
    const id = `20990101T000000${String(i).padStart(3, "0")}Z-flood00000`;
    ids.push(id);
    await writeRawRequest(
      root.paths,
      `${id}.json`,
      requestJson(id, "run-a", "set_view", {
        diff: i % 2 === 0 ? "full" : "none",
      }),
    );
  }
  const first = await plane.boundary({ idle: false });
  assert.ok(first.length >= 1 && first.length <= 8, String(first.length));
  let rounds = 1;
  while ((await listNames(root.paths.requests)).length > 0) {
    await plane.boundary({ idle: false });
    assert.ok(++rounds < 200, "the backlog drains");
  }
  assert.ok(rounds >= 100 / 8, `drained over ${rounds} boundaries`);
  const logged = (await readJsonl<LogEntry>(root.paths.log)).map((e) =>
    e.request_id
  );
  assert.deepEqual(logged, ids);
});

Deno.test("a torn last line in log.jsonl is repaired when the plane opens, and later entries read back", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  await first.close("interrupted");
  await Deno.writeTextFile(root.paths.log, '{"v":1,"command":"set_vi', {
    append: true,
  });
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.boundary({ idle: true });
  const text = await Deno.readTextFile(root.paths.log);
  assert.ok(!text.includes('set_vi"'), "the torn line is gone");
  assert.deepEqual(
    (await logEntriesOf(root.paths, request_id)).map((e) => e.outcome),
    ["applied"],
  );
});

Deno.test("a client's entry after a torn line (no runner open) still reads back", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.writeTextFile(root.paths.log, '{"torn":', { append: true });
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.boundary({ idle: true });
  const entries = (await log(root.ref("run-a"))).filter((e) =>
    e.request_id === request_id
  );
  assert.deepEqual(entries.map((e) => e.outcome), ["applied"]);
});

Deno.test("dot-temp files a killed runner left are removed when the plane opens; a client's request in flight is kept", async () => {
  await using root = await makeControlRoot();
  const first = await root.open("run-a");
  await first.close("interrupted");
  const leftovers = [
    join(root.paths.dir, ".snapshot.json.0badf00d.tmp"),
    join(root.paths.outcomes, ".2099.json.1234abcd.tmp"),
    join(root.paths.archive, ".x.jsonl.abcdef01.tmp"),
  ];
  for (const path of leftovers) await Deno.writeTextFile(path, "{");
  const inFlight = join(root.paths.requests, ".2099.json.00ff00ff.tmp");
  await Deno.writeTextFile(inFlight, "{");
  await root.open("run-b");
  for (const path of leftovers) {
    await assert.rejects(Deno.lstat(path), Deno.errors.NotFound, path);
  }
  await Deno.lstat(inFlight);
});

Deno.test("the events of a run id continue from its first line's owner, even when the snapshot was lost", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  await a.observe(runEvent("run-a", 1, "run_started"));
  await a.observe(runEvent("run-a", 2, "message_received"));
  await a.close("interrupted");
  await Deno.remove(root.paths.snapshot);
  const again = await root.open("run-a");
  assert.equal(again.opened.last_seq, 2);
  await again.close("completed");
  assert.deepEqual(await listNames(root.paths.archive), []);
});

Deno.test("a request written after the run ended is settled by its client: one rejected receipt, one log entry, a StateError", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await plane.close("completed");
  let id = "";
  await assert.rejects(
    writeRequest(root.ref("run-a"), "steer", { text: "too late" }),
    (error) => {
      assert.ok(error instanceof StateError, String(error));
      assert.match(error.message, /ended \(completed\) before the request/);
      id = /Request (\S+) is recorded/.exec(error.hint ?? "")?.[1] ?? "";
      return true;
    },
  );
  assert.notEqual(id, "");
  const entries = await logEntriesOf(root.paths, id);
  assert.deepEqual(entries.map((e) => e.outcome), ["rejected"]);
  assert.deepEqual(await listNames(root.paths.requests), []);
  assert.deepEqual(await listNames(root.paths.outcomes), [`${id}.json`]);
});

Deno.test("a request written while the run was closing is decided by the runner's last sweep, exactly once", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const pending = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await plane.close("completed");
  const entries = await logEntriesOf(root.paths, pending.request_id);
  assert.deepEqual(entries.map((e) => e.outcome), ["rejected"]);
  assert.match(entries[0]?.reason ?? "", /the run ended \(completed\)/);
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("requestOutcome() answers a steer's final outcome once its lane delivered it, not the receipt's accepted", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const ref = root.ref("run-a");
  const { request_id } = await writeRequest(ref, "steer", { text: "go" });
  assert.equal((await requestOutcome(ref, request_id)).outcome, "pending");
  const [steer] = await plane.boundary({ idle: false });
  const accepted = await requestOutcome(ref, request_id);
  assert.equal(accepted.outcome, "accepted");
  assert.equal(accepted.final, false);
  await plane.steerSettled({
    command: steer as Extract<typeof steer, { command: "steer" }>,
    delivered: true,
    delivery: "interrupt_and_resume",
    attempt: 1,
    provider: "simulated",
  });
  const final = await requestOutcome(ref, request_id);
  assert.equal(final.outcome, "applied");
  assert.equal(final.final, true);
  const receipt = JSON.parse(
    await Deno.readTextFile(join(root.paths.outcomes, `${request_id}.json`)),
  );
  assert.equal(receipt.outcome, "accepted", "receipts stay immutable");
  await assert.rejects(requestOutcome(ref, "no-such-request"), /No request/);
});

Deno.test("a request its client settled as the run ended is not logged again by the runner's last sweep", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const id = "20261130T000000000Z-aaaaaaaaaa";
  await writeRawRequest(
    root.paths,
    `${id}.json`,
    requestJson(id, "run-a", "set_view", { thinking: "hide" }),
  );
  // What a client does once it found the run ended: its receipt and its
  // entry, while the runner's last sweep had already listed the file.
  const reason = "the run ended (completed) before the request was applied";
  assert.ok(
    await publishReceipt(root.paths, `${id}.json`, {
      request_id: id,
      run_id: "run-a",
      command: "set_view",
      outcome: "rejected",
      reason,
      recorded_at: new Date().toISOString(),
      decided_by: "client",
    }),
  );
  await appendLogEntry(root.paths, {
    run_id: "run-a",
    request_id: id,
    command: "set_view",
    params: { thinking: "hide" },
    author: "client",
    outcome: "rejected",
    reason,
    prompt_id: null,
    attempt: null,
  });
  await plane.close("completed");
  assert.deepEqual(
    (await logEntriesOf(root.paths, id)).map((e) => e.author),
    ["client"],
  );
});

Deno.test("a request nested thousands of levels deep is refused with a short reason, and the requests after it are still settled", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const deep = "[".repeat(6000) + "]".repeat(6000);
  await writeRawRequest(
    root.paths,
    "a-deep.json",
    `{"v":1,"id":"a","command":"set_view","run_id":"run-a","author":"x","params":{"thinking":${deep}}}`,
  );
  const wide = JSON.stringify({ thinking: "x".repeat(40_000) });
  await writeRawRequest(
    root.paths,
    "b-wide.json",
    `{"v":1,"id":"b","command":"set_view","run_id":"run-a","author":"x","params":${wide}}`,
  );
  for (const id of ["c", "d"]) {
    await writeRawRequest(
      root.paths,
      `${id}-late.json`,
      requestJson(id, "run-a", "set_view", { thinking: "hide" }),
    );
  }
  await plane.close("completed");
  assert.deepEqual(await listNames(root.paths.requests), []);
  const [deepEntry] = await logEntriesOf(root.paths, "a-deep");
  assert.equal(deepEntry?.outcome, "rejected");
  assert.match(deepEntry?.reason ?? "", /too deeply nested/);
  const [wideEntry] = await logEntriesOf(root.paths, "b-wide");
  assert.ok((wideEntry?.reason ?? "").length < 300, "the reason is short");
  for (const id of ["c-late", "d-late"]) {
    assert.equal((await logEntriesOf(root.paths, id)).length, 1, id);
  }
  assert.deepEqual(root.warnings, []);
});

Deno.test("outcomes/ swapped for a link again and again by another process while requests are processed: nothing is ever written into the link's target", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  // A separate process swaps outcomes/ for a link to the canary as fast as
  // it can, for as long as the requests are processed (bounded: 60 s).
  const swapper = new Deno.Command("bash", {
    args: [
      "-c",
      `end=$((SECONDS + 60)); i=0; : > "$1/ready"
       while [ ! -e "$1/stop" ] && [ $SECONDS -lt $end ]; do
         mv "$2" "$2.$i" 2>/dev/null && ln -s "$3" "$2" 2>/dev/null
         i=$((i + 1))
       done`,
      "bash",
      root.dir,
      root.paths.outcomes,
      canary,
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (let i = 0; i < 400; i++) {
      await writeRawRequest(root.paths, `req-${i}.json`, "not json");
      await plane.boundary({ idle: true });
    }
  } finally {
    await Deno.writeTextFile(join(root.dir, "stop"), "");
    await swapper.status;
  }
  assert.deepEqual(await canaryNames(canary), ["bait.txt"]);
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
});

Deno.test("a hard link planted at control/log.jsonl is moved aside and logged; the file it shares is never appended to", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  await Deno.remove(root.paths.log).catch(() => {});
  await Deno.link(join(canary, "bait.txt"), root.paths.log);
  const { request_id } = await writeRequest(root.ref("run-a"), "set_view", {
    diff: "full",
  });
  await drainRequests(plane, root.paths, true);
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
  const entries = await readJsonl<LogEntry>(root.paths.log);
  const refusal = entries.find((e) => e.command === "link_refused");
  assert.equal(refusal?.params.kind, "hard");
  assert.match(refusal?.reason ?? "", /was a hard link/);
  assert.equal(
    entries.filter((e) => e.request_id === request_id).length,
    1,
  );
});

Deno.test("a link planted at control/snapshot.json is refused and logged, not silently replaced", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await Deno.remove(root.paths.snapshot);
  await Deno.symlink(join(canary, "bait.txt"), root.paths.snapshot);
  await plane.promptStarted(promptStart());
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
  assert.ok((await Deno.lstat(root.paths.snapshot)).isFile);
  const refusal = (await readJsonl<LogEntry>(root.paths.log)).find((e) =>
    e.command === "link_refused"
  );
  assert.equal(refusal?.params.path, "control/snapshot.json");
  assert.equal(root.warnings.length, 1, root.warnings.join("\n"));
});

Deno.test("links planted at outcomes/ and at the log at once are both moved aside, and both refusals are logged", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const plane = await root.open("run-a");
  await Deno.remove(root.paths.outcomes, { recursive: true });
  await Deno.symlink(canary, root.paths.outcomes);
  await Deno.symlink(join(canary, "log"), root.paths.log);
  await writeRawRequest(root.paths, "x.json", "not json");
  await plane.boundary({ idle: true });
  await plane.close("completed");
  const aside = (await listNames(root.paths.dir)).filter((n) =>
    n.includes(".link-refused-")
  );
  const logged = (await readJsonl<LogEntry>(root.paths.log))
    .filter((e) => e.command === "link_refused")
    .map((e) => String(e.params.moved_to).split("/").pop());
  assert.equal(aside.length, 2, aside.join());
  assert.deepEqual(logged.sort(), aside.sort());
  assert.deepEqual(await canaryNames(canary), ["bait.txt"]);
});

Deno.test("links planted at control/snapshot.json by another process while it is rewritten: never followed, and every one is logged, moved aside or replaced", async () => {
  await using root = await makeControlRoot();
  const canary = await makeCanary(root.dir);
  const saved = join(root.dir, "saved");
  await Deno.mkdir(saved);
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart());
  const planter = new Deno.Command("bash", {
    args: [
      "-c",
      `end=$((SECONDS + 60)); i=0; : > "$1/ready"
       while [ ! -e "$1/stop" ] && [ $SECONDS -lt $end ]; do
         i=$((i + 1))
         if [ -L "$2" ]; then continue; fi
         mv "$2" "$3/$i" 2>/dev/null
         ln -s "$4" "$2" 2>/dev/null && echo "$i" >> "$1/plants"
       done`,
      "bash",
      root.dir,
      root.paths.snapshot,
      saved,
      join(canary, "bait.txt"),
    ],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  const plants = async () =>
    (await Deno.readTextFile(join(root.dir, "plants")).catch(() => ""))
      .split("\n").filter(Boolean).length;
  try {
    // The rewrites race a planter that runs (bash starts slowly on a busy
    // machine), for 300 rewrites and until it planted a few links.
    const deadline = Date.now() + 20_000;
    while (!(await Deno.lstat(join(root.dir, "ready")).catch(() => null))) {
      if (Date.now() > deadline) throw new Error("the planter did not start");
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    for (let i = 0;; i++) {
      const enough = i >= 300 && i % 50 === 0 &&
        (await plants() >= 3 || Date.now() > deadline);
      if (enough) break;
      await plane.viewChanged({
        log_mode: i % 2 === 0 ? "verbose" : "compact",
        tool_output: "summary",
        thinking: "show",
        diff: "stat",
      });
    }
  } finally {
    await Deno.writeTextFile(join(root.dir, "stop"), "");
    await planter.status;
  }
  assert.equal(
    await Deno.readTextFile(join(canary, "bait.txt")),
    "untouched\n",
  );
  assert.deepEqual(await canaryNames(canary), ["bait.txt"]);
  const planted = await plants();
  const refusals = (await readJsonl<LogEntry>(root.paths.log)).filter((e) =>
    e.command === "link_refused" && e.params.path === "control/snapshot.json"
  );
  const still = (await Deno.lstat(root.paths.snapshot)).isSymlink ? 1 : 0;
  assert.ok(planted > 0, "the planter planted links");
  const moved = refusals.filter((e) => e.params.kind === "symbolic");
  const replaced = refusals.filter((e) => e.params.kind === "replaced");
  const aside = (await listNames(root.paths.dir)).filter((name) =>
    name.startsWith("snapshot.json.link-refused-")
  );
  // Each link moved aside is logged; each one the runner could not see
  // before its rename is reported as replaced (as is a file of its own
  // moved away without a link put in its place, which is tampering too).
  assert.equal(moved.length, aside.length);
  assert.ok(
    moved.length + replaced.length + still >= planted,
    `${planted} planted: ${moved.length} moved aside, ${replaced.length} replaced, ${still} still there`,
  );
});
