/**
 * `prompt_runner serve` over HTTP: a real server process, real runs, and
 * `fetch`. The token and cookie, the security headers on every kind of
 * response, the SSE framing of a run's events (the stored lines, byte for
 * byte, resumable), the form actions through the client API, and new runs
 * found without a restart.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader } from "../_helpers/lines.ts";
import { readJsonl, startRun, waitForSnapshot } from "../_helpers/live_run.ts";
import { runCli, spawnCli, waitFor } from "../_helpers/run_cli.ts";
import {
  fdListing,
  fdsOn,
  openFiles as openFilesOf,
  serve,
  servedBurst,
} from "../_helpers/serve_process.ts";
import { sse, type SseMessage } from "../_helpers/sse.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; " +
  "img-src 'self' data:; connect-src 'self'; form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; object-src 'none'";

/** The RootKey of a state root that is not a workspace's. */
async function rootKey(stateRoot: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(stateRoot),
  );
  return "r-" +
    [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
      .join("").slice(0, 12);
}

/** Fetches and reads the body, so nothing is left open. */
async function get(
  url: string,
  init: RequestInit = {},
): Promise<{ response: Response; body: string }> {
  const response = await fetch(url, { redirect: "manual", ...init });
  return { response, body: await response.text() };
}

function assertSecurityHeaders(response: Response, what: string): void {
  assert.equal(response.headers.get("content-security-policy"), CSP, what);
  assert.equal(response.headers.get("x-content-type-options"), "nosniff", what);
  assert.equal(response.headers.get("referrer-policy"), "no-referrer", what);
  assert.equal(response.headers.get("cache-control"), "no-store", what);
}

/** Reads a run's event stream until `stopAt` says so; returns events and others. */
async function readEvents(
  url: string,
  cookie: string,
  headers: Record<string, string>,
  stopAt: (id: number, messages: SseMessage[]) => boolean,
): Promise<{ ids: number[]; data: string[]; others: SseMessage[] }> {
  const response = await fetch(url, { headers: { cookie, ...headers } });
  assert.equal(response.status, 200);
  assertSecurityHeaders(response, "SSE");
  assert.match(
    response.headers.get("content-type") ?? "",
    /^text\/event-stream/,
  );
  const ids: number[] = [];
  const data: string[] = [];
  const others: SseMessage[] = [];
  const all: SseMessage[] = [];
  for await (const message of sse(response)) {
    all.push(message);
    if (message.event === null || message.event === "message") {
      ids.push(Number(message.id));
      data.push(message.data);
      if (stopAt(Number(message.id), all)) break;
    } else {
      others.push(message);
    }
  }
  return { ids, data, others };
}

Deno.test("serve prints the URL line first, refuses a missing or wrong token with 401, and trades ?token= for an HttpOnly SameSite=Strict cookie", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  await using dashboard = await serve([packet.dir]);
  const { origin, token, cookie } = dashboard;

  const bare = await get(`${origin}/`);
  assert.equal(bare.response.status, 401);
  assertSecurityHeaders(bare.response, "401");
  const wrong = await get(`${origin}/?token=${"x".repeat(43)}`);
  assert.equal(wrong.response.status, 401);
  const wrongCookie = await get(`${origin}/`, {
    headers: { cookie: `${cookie.split("=")[0]}=${token.slice(1)}x` },
  });
  assert.equal(wrongCookie.response.status, 401);

  const entry = await get(`${origin}/?token=${token}`);
  assert.equal(entry.response.status, 303);
  assertSecurityHeaders(entry.response, "303");
  assert.equal(entry.response.headers.get("location"), "/");
  assert.equal(
    entry.response.headers.get("set-cookie"),
    `pr_token_${
      new URL(origin).port
    }=${token}; HttpOnly; SameSite=Strict; Path=/`,
  );
  const page = await get(`${origin}/`, { headers: { cookie } });
  assert.equal(page.response.status, 200);
  assertSecurityHeaders(page.response, "page");
  assert.match(page.response.headers.get("content-type")!, /^text\/html/);
  assert.match(page.body, /id="runs"/);

  const missing = await get(`${origin}/no/such/page`, { headers: { cookie } });
  assert.equal(missing.response.status, 404);
  assertSecurityHeaders(missing.response, "404");
  const unknownRoot = await get(`${origin}/run/r-000000000000/x`, {
    headers: { cookie },
  });
  assert.equal(unknownRoot.response.status, 404);

  for (
    const [path, type] of [["app.js", "text/javascript"], [
      "app.css",
      "text/css",
    ]]
  ) {
    const asset = await get(`${origin}/static/${path}`, {
      headers: { cookie },
    });
    assert.equal(asset.response.status, 200);
    assertSecurityHeaders(asset.response, path!);
    assert.equal(
      asset.response.headers.get("content-type"),
      `${type}; charset=utf-8`,
    );
  }

  const stream = await fetch(`${origin}/runs/stream`, { headers: { cookie } });
  assert.equal(stream.status, 200);
  assertSecurityHeaders(stream, "runs stream");
  await stream.body!.cancel();

  const key = await rootKey(packet.stateRoot);
  for (const action of ["steer", "view", "amend", "relax"]) {
    const got = await get(`${origin}/run/${key}/some-run/${action}`, {
      headers: { cookie },
    });
    assert.equal(got.response.status, 405, action);
    assert.equal(got.response.headers.get("allow"), "POST");
    assertSecurityHeaders(got.response, "405");
    for (const from of [{ origin: "http://evil.example" }, {}]) {
      const post = await get(`${origin}/run/${key}/some-run/${action}`, {
        method: "POST",
        headers: {
          cookie,
          "content-type": "application/x-www-form-urlencoded",
          ...from,
        },
        body: "text=hello",
      });
      assert.equal(
        post.response.status,
        403,
        `${action} ${JSON.stringify(from)}`,
      );
      assertSecurityHeaders(post.response, "403");
    }
  }
  const stopped = await dashboard.stop();
  assert.equal(stopped.code, 143);
  assert.equal(stopped.stderr, "");
});

Deno.test("serve streams a run's events as SSE: id is the seq, data the stored line byte for byte, from seq 1, resumable after Last-Event-ID with no gap or duplicate, with snapshot events without id", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(20, 40) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  const runId = String(snapshot.run_id);
  await using dashboard = await serve([packet.dir]);
  const { origin, cookie } = dashboard;
  const url = `${origin}/run/${await rootKey(
    packet.stateRoot,
  )}/${runId}/events`;

  // A first browser leaves after 25 events (and the run's snapshot)…
  const first = await readEvents(
    url,
    cookie,
    {},
    (id, seen) => id >= 25 && seen.some((m) => m.event === "snapshot"),
  );
  const left = first.ids.at(-1)!;
  assert.deepEqual(first.ids, Array.from({ length: left }, (_, i) => i + 1));
  const snapshots = first.others.filter((m) => m.event === "snapshot");
  assert.ok(snapshots.length >= 1, "a snapshot event");
  assert.ok(snapshots.every((m) => m.id === null), "snapshots carry no id");
  assert.equal(JSON.parse(snapshots[0]!.data).run_id, runId);
  // …and comes back with Last-Event-ID: the rest, to run_finished.
  const rest = await readEvents(
    url,
    cookie,
    { "last-event-id": String(left) },
    () => false,
  );
  assert.equal(rest.ids[0], left + 1);
  const ids = [...first.ids, ...rest.ids];
  assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1));
  assert.equal((await run.finish()).code, 0);
  const stored = (await Deno.readTextFile(
    join(packet.stateRoot, "control", "events.jsonl"),
  )).split("\n").filter((line) => line !== "");
  assert.deepEqual([...first.data, ...rest.data], stored);
  assert.equal(JSON.parse(stored.at(-1)!).type, "run_finished");
  // The run page, and the studio text of a range of its events.
  const key = await rootKey(packet.stateRoot);
  const runPage = await get(`${origin}/run/${key}/${runId}`, {
    headers: { cookie },
  });
  assert.equal(runPage.response.status, 200);
  assertSecurityHeaders(runPage.response, "run page");
  const rendered = await get(
    `${origin}/run/${key}/${runId}/rendered?from=3&to=7&thinking=hide`,
    { headers: { cookie } },
  );
  assert.equal(rendered.response.status, 200);
  assertSecurityHeaders(rendered.response, "rendered");
  assert.deepEqual(
    JSON.parse(rendered.body).map((
      e: { seq: number; type: string },
    ) => [e.seq, e.type]),
    stored.slice(2, 7).map((line) => {
      const event = JSON.parse(line);
      return [event.seq, event.type];
    }),
  );
  const unknown = await get(`${origin}/run/${key}/no-such-run/events`, {
    headers: { cookie },
  });
  assert.equal(unknown.response.status, 404);
  assertSecurityHeaders(unknown.response, "404 events");
  // ?after=N starts after N as well.
  const after = await readEvents(
    `${url}?after=${ids.length - 2}`,
    cookie,
    {},
    () => false,
  );
  assert.deepEqual(after.ids, [ids.length - 1, ids.length]);
  assert.deepEqual(after.data, stored.slice(-2));
});

Deno.test("serve records a web steer as web:NAME in the control log and the intervention record; amend without a reason and relax without confirm are refused and record nothing", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(60, 50) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  const runId = String(snapshot.run_id);
  await using dashboard = await serve([packet.dir, "--author", "ada"]);
  const { origin, cookie } = dashboard;
  const base = `${origin}/run/${await rootKey(packet.stateRoot)}/${runId}`;
  const post = async (
    action: string,
    fields: Record<string, string>,
    accept = "application/json",
  ) =>
    await get(`${base}/${action}`, {
      method: "POST",
      headers: {
        cookie,
        origin,
        accept,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams(fields).toString(),
    });

  const steered = await post("steer", { text: "mind the gap", prompt: "01" });
  assert.equal(steered.response.status, 200, steered.body);
  assertSecurityHeaders(steered.response, "action");
  const answer = JSON.parse(steered.body);
  assert.ok(["applied", "accepted"].includes(answer.outcome), steered.body);
  assert.match(answer.request_id, /^\d{8}T\d{9}Z-/);
  const delivered = await waitFor(
    "the intervention record",
    async () =>
      (await readJsonl(join(packet.stateRoot, "interventions", "01.jsonl")))
        .find((r) => r.text === "mind the gap"),
  );
  assert.equal(delivered.author, "web:ada");
  const logged = await readJsonl(
    join(packet.stateRoot, "control", "log.jsonl"),
  );
  const entries = logged.filter((e) => e.request_id === answer.request_id);
  assert.ok(entries.length >= 1);
  assert.ok(
    entries.every((e) => e.author === "web:ada" && e.command === "steer"),
  );

  // A plain form post is sent back to the run page, naming the request.
  const form = await post("steer", { text: "and keep going" }, "text/html");
  assert.equal(form.response.status, 303);
  assert.match(
    form.response.headers.get("location")!,
    new RegExp(`^/run/r-[0-9a-f]{12}/${runId}\\?action=steer&request=\\d{8}T`),
  );

  const shown = await get(`${origin}${form.response.headers.get("location")}`, {
    headers: { cookie },
  });
  assert.equal(shown.response.status, 200);

  const view = await post("view", { thinking: "hide", log_mode: "" });
  assert.equal(view.response.status, 200, view.body);
  assert.equal(JSON.parse(view.body).outcome, "applied");
  await waitForSnapshot(
    packet.stateRoot,
    "the view to change",
    (s) => (s.view as Record<string, string>).thinking === "hide",
  );
  const noSetting = await post("view", { log_mode: "", thinking: "" });
  assert.equal(noSetting.response.status, 400);
  assert.equal(
    JSON.parse(noSetting.body).reason,
    "Name at least one setting to change",
  );
  const badSetting = await post("view", { thinking: "loud" });
  assert.equal(badSetting.response.status, 400);
  assert.match(JSON.parse(badSetting.body).reason, /show, hide/);

  const empty = await post("steer", { text: "  " });
  assert.equal(empty.response.status, 400);
  assert.deepEqual(JSON.parse(empty.body), {
    outcome: "refused",
    reason: "A steer needs something to say: the text is empty",
  });

  const noReason = await post("amend", {
    prompt: "01",
    clause: "files_exist",
    value: "NOTES.md",
    reason: "",
  });
  assert.equal(noReason.response.status, 400);
  assert.deepEqual(JSON.parse(noReason.body), {
    outcome: "refused",
    reason: "An amendment needs a reason: --reason is mandatory",
  });
  const noConfirm = await post("relax", {
    prompt: "01",
    clause: "files_exist",
    reason: "not needed",
  });
  assert.equal(noConfirm.response.status, 400);
  assert.equal(
    JSON.parse(noConfirm.body).reason,
    "Relaxing a contract needs confirmation: pass --confirm",
  );
  const refusedForm = await post("amend", {
    prompt: "01",
    clause: "files_exist",
    value: "x",
  }, "text/html");
  assert.equal(refusedForm.response.status, 303);
  assert.match(
    refusedForm.response.headers.get("location")!,
    /[?&]error=An\+amendment\+needs\+a\+reason/,
  );
  assert.deepEqual(
    await readJsonl(join(packet.stateRoot, "amendments", "01.jsonl")),
    [],
  );
  const after = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.ok(!after.some((e) => e.command === "amend" || e.command === "relax"));

  // With a reason, the amendment is recorded under the web author.
  const amended = await post("amend", {
    prompt: "01",
    clause: "files_exist",
    value: "NOTES.md",
    reason: "the notes are part of it",
  });
  assert.equal(amended.response.status, 200, amended.body);
  assert.equal(JSON.parse(amended.body).outcome, "recorded");
  const [record] = await readJsonl(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  assert.equal(record?.author, "web:ada");
  run.child.kill("SIGTERM");
  await run.finish();
});

Deno.test("serve finds a run started after it on /runs/stream, without a restart", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(10, 40) },
  });
  await using dashboard = await serve([packet.dir]);
  const { origin, cookie } = dashboard;
  const key = await rootKey(packet.stateRoot);
  const response = await fetch(`${origin}/runs/stream`, {
    headers: { cookie },
  });
  const messages = sse(response);
  const first = await messages.next();
  assert.equal(first.value?.event, "snapshot");
  assert.equal(first.value?.id, null);
  const before = JSON.parse(first.value!.data);
  assert.equal(before.root, key);
  assert.equal(before.run, "");
  assert.equal(before.status, "never_run");
  await using run = startRun(packet.dir);
  let found: Record<string, unknown> | null = null;
  for await (const message of messages) {
    const row = JSON.parse(message.data);
    if (row.run !== "") {
      found = row;
      break;
    }
  }
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run",
    () => true,
  );
  assert.equal(found?.run, snapshot.run_id);
  assert.equal(found?.root, key);
  assert.ok(["running", "completed"].includes(String(found?.status)));
  await messages.return(undefined);
  await run.finish();
});

Deno.test("serve --help exits 0, a bad flag exits 2, a TARGET not found exits 3", async () => {
  const help = await runCli(["serve", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: prompt_runner serve \[TARGET\.\.\.\]/);
  const flag = await runCli(["serve", "--bogus"]);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /^error: Invalid arguments for "serve"/);
  const port = await runCli(["serve", "--port", "70000"]);
  assert.equal(port.code, 2);
  assert.match(port.stderr, /^error: Invalid --port "70000"/);
  const dir = await Deno.makeTempDir();
  try {
    const missing = await runCli(["serve", join(dir, "nowhere")]);
    assert.equal(missing.code, 3);
    assert.match(missing.stderr, /^error: Cannot find packet/);
    assert.equal(missing.stdout, "");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("serve on a host beyond loopback warns on stderr and still needs the token", async () => {
  await using packet = await makePacket();
  const child = spawnCli(["serve", packet.dir, "--host", "0.0.0.0"]);
  const lines = new LineReader(child.stdout);
  const stderr = new LineReader(child.stderr);
  const first = await lines.next();
  assert.match(first ?? "", /^dashboard: http:\/\/0\.0\.0\.0:\d+\/\?token=/);
  assert.match(
    await stderr.next() ?? "",
    /^warning: the dashboard listens on 0\.0\.0\.0/,
  );
  const port = /:(\d+)\//.exec(first!)![1];
  const denied = await get(`http://127.0.0.1:${port}/`);
  assert.equal(denied.response.status, 401);
  child.kill("SIGINT");
  assert.equal((await child.status).code, 130);
  await lines.rest();
  await stderr.rest();
});

Deno.test("serve's event streams let go of their watchers and files when the browsers leave", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(80, 50) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  await using dashboard = await serve([packet.dir]);
  const { origin, cookie, pid } = dashboard;
  const url = `${origin}/run/${await rootKey(
    packet.stateRoot,
  )}/${snapshot.run_id}/events`;
  const openFiles = (): Promise<number> => openFilesOf(pid);
  await readEvents(url, cookie, {}, (id) => id >= 3);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const idle = await openFiles();
  const responses = await Promise.all(
    Array.from({ length: 5 }, () => fetch(url, { headers: { cookie } })),
  );
  const readers = responses.map((r) => sse(r));
  for (const reader of readers) await reader.next();
  const busy = await openFiles();
  assert.ok(busy >= idle + 5, `${busy} open with 5 streams, ${idle} idle`);
  for (const reader of readers) await reader.return(undefined);
  await waitFor(
    "the streams' files to close",
    async () => await openFiles() <= idle + 1,
    10_000,
  );
  run.child.kill("SIGTERM");
  await run.finish();
});

Deno.test("serve without a TARGET shows the prepared workspaces and the current directory's packet", async () => {
  await using here = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  await using other = await makePacket();
  const env = { XDG_STATE_HOME: join(other.root, "state") };
  await Deno.writeTextFile(
    join(other.root, "workspace.yml"),
    `id: ops-packet\npacket: ${other.dir}\n`,
  );
  const prepared = await runCli(
    ["workspace", "prepare", join(other.root, "workspace.yml")],
    { env },
  );
  assert.equal(prepared.code, 0, prepared.stderr);
  // The packet here has local state, so it is itself, not a workspace's.
  assert.equal((await runCli(["run", here.dir], { env })).code, 0);
  await using dashboard = await serve([], { env, cwd: here.dir });
  const response = await fetch(`${dashboard.origin}/runs/stream`, {
    headers: { cookie: dashboard.cookie },
  });
  const roots: string[] = [];
  for await (const message of sse(response)) {
    roots.push(JSON.parse(message.data).root);
    if (roots.length === 2) break;
  }
  assert.deepEqual(
    roots.sort(),
    [await rootKey(here.stateRoot), "ops-packet"].sort(),
  );
});

Deno.test("serve restarted with PROMPT_RUNNER_SERVE_TOKEN and its port keeps the old cookie valid: the stream resumes after Last-Event-ID with no gap or duplicate; a bad token is a usage error", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(20, 40) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  const runId = String(snapshot.run_id);
  const token = "t".repeat(21) + "_-0123456789ABCDEFGHIJ";
  const env = { PROMPT_RUNNER_SERVE_TOKEN: token };
  const first = await serve([packet.dir], { env });
  assert.equal(first.token, token);
  const port = new URL(first.origin).port;
  const path = `/run/${await rootKey(packet.stateRoot)}/${runId}/events`;
  const before = await readEvents(
    `${first.origin}${path}`,
    first.cookie,
    {},
    (id) => id >= 10,
  );
  assert.equal((await first.stop()).code, 143);
  // The same port and token: the browser's cookie and Last-Event-ID still work.
  await using second = await serve([packet.dir, "--port", port], { env });
  assert.equal(second.origin, first.origin);
  const after = await readEvents(
    `${second.origin}${path}`,
    first.cookie,
    { "last-event-id": String(before.ids.at(-1)) },
    () => false,
  );
  const ids = [...before.ids, ...after.ids];
  assert.deepEqual(ids, Array.from({ length: ids.length }, (_, i) => i + 1));
  assert.equal((await run.finish()).code, 0);
  assert.equal(
    JSON.parse(after.data.at(-1)!).type,
    "run_finished",
  );

  const bad = await runCli(["serve", packet.dir], {
    env: { PROMPT_RUNNER_SERVE_TOKEN: "short" },
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^error: PROMPT_RUNNER_SERVE_TOKEN must be /m);
});

Deno.test("serve shares one follower per run among its streams; a stream behind what it keeps catches up alone, then joins; each gets every seq once", async () => {
  // 2,400-odd events at once (more than a run's shared follower keeps),
  // then a prompt that keeps the run live for a few seconds.
  await using served = await servedBurst(400, { rounds: 30, delay: 20 }, 2_100);
  const { packet, finished, snapshot, dashboard } = served;
  const { origin, cookie, pid } = dashboard;
  const url = `${origin}/run/${await rootKey(
    packet.stateRoot,
  )}/${snapshot.run_id}/events`;
  // Each follower holds the events file open (and, while it reads, a
  // duplicate for a moment: see fdsOn).
  const eventsFile = join(packet.stateRoot, "control", "events.jsonl");
  const followers = async (): Promise<number> =>
    (await fdsOn(pid, eventsFile)).length;
  const near = Number(snapshot.last_seq) - 3;
  const stream = (headers: Record<string, string>, query = "") =>
    readEvents(`${url}${query}`, cookie, headers, () => false);
  // Three streams near the live end: one follower among them.
  const tails = [stream({}, `?after=${near}`)];
  await waitFor(
    "the first stream's follower",
    async () => await followers() === 1,
    10_000,
  );
  tails.push(
    stream({ "last-event-id": String(near) }),
    stream({}, `?after=${near + 1}`),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  // What the server holds open, to tell whose a second follower is: looked
  // at again (a few times) while a read's duplicate shows.
  const counts: number[] = [];
  let held: string[] = [];
  do {
    if (counts.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    held = await fdListing(pid);
    counts.push(
      held.filter((line) => line.endsWith(` -> ${eventsFile}`)).length,
    );
  } while (counts.at(-1)! > 1 && counts.length < 10);
  assert.equal(
    counts.at(-1),
    1,
    `no follower of their own; looks: ${
      counts.join(", ")
    }; the server holds:\n${held.join("\n")}`,
  );
  // Two far behind: read on their own, then join.
  const behind = [stream({}), stream({ "last-event-id": "1000" })];
  const [a, b, c, full, fromMid] = await Promise.all([...tails, ...behind]);
  assert.equal((await finished).code, 0);
  const stored = (await Deno.readTextFile(
    join(packet.stateRoot, "control", "events.jsonl"),
  )).split("\n").filter((line) => line !== "");
  const expect = (got: { ids: number[]; data: string[] }, after: number) => {
    const want = stored.slice(after);
    assert.equal(got.ids.length, want.length, `from ${after + 1}`);
    assert.deepEqual(got.ids, want.map((_, i) => after + i + 1));
    assert.deepEqual(got.data, want);
  };
  expect(a!, near);
  expect(b!, near);
  expect(c!, near + 1);
  expect(full!, 0);
  expect(fromMid!, 1000);
  assert.equal(JSON.parse(stored.at(-1)!).type, "run_finished");
});
