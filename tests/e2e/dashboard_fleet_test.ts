/**
 * `serve --fleet URL` (issue 21): a real `nats-server` with a password,
 * two real `run --fleet` processes from two state roots, a real `serve`
 * process and `fetch`. The runs table lists both runs, live; a run page's
 * stream carries the fleet run's events with `id:` its seq and `data:` its
 * stored line; a steer posted through the page's form lands in the run's
 * log as `web:NAME`; the URL's password appears in no page, stream, answer
 * or log line; a fleet that cannot be reached (or refuses the password) is
 * exit 4 with the password masked.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import type { FleetRun } from "../../mod.ts";
import { freePort, NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { readJsonl } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import {
  PASSWORD,
  runPath,
  type ServedFleet,
  servedFleet,
} from "../_helpers/served_fleet.ts";
import { serve } from "../_helpers/serve_process.ts";
import { sse, type SseMessage } from "../_helpers/sse.ts";

const ignore = NATS_SERVER === null;

/** Reads an SSE response until `done` says so; every message read. */
async function readStream(
  served: ServedFleet,
  path: string,
  done: (messages: SseMessage[]) => boolean,
): Promise<SseMessage[]> {
  const response = await fetch(`${served.dashboard.origin}${path}`, {
    headers: { cookie: served.dashboard.cookie },
  });
  assert.equal(response.status, 200, path);
  const messages: SseMessage[] = [];
  for await (const message of sse(response)) {
    messages.push(message);
    served.seen.push(`${message.event}\n${message.id}\n${message.data}`);
    if (done(messages)) break;
  }
  return messages;
}

Deno.test({
  name:
    "serve --fleet lists the runs of two state roots published by run --fleet, live, with their fleet addresses, and the fleet's URL masked",
  ignore,
  async fn(): Promise<void> {
    await using served = await servedFleet();
    const { status, body } = await served.get("/");
    assert.equal(status, 200);
    for (const run of served.fleetRuns) {
      const address = `fleet:${run.node}/${run.root}/${run.run_id}`;
      assert.ok(body.includes(address), `the runs page lists ${address}`);
      assert.ok(body.includes(`href="${runPath(run)}"`), runPath(run));
    }
    assert.match(body, /data-status="running"/);
    assert.ok(body.includes("fleet: nats://ops:***@127.0.0.1:"), body);
    // The runs page's stream: a row for each run now, then as they change.
    const rowsOf = (messages: SseMessage[], runId: string): string[] =>
      messages.map((m) => m.data).filter((data) =>
        JSON.parse(data).run === runId
      );
    // Live: each run's row again, once the fleet's copy of it moved on.
    const rows = await readStream(
      served,
      "/runs/stream",
      (messages) =>
        served.fleetRuns.every((run) =>
          new Set(rowsOf(messages, run.run_id)).size >= 2
        ),
    );
    for (const run of served.fleetRuns) {
      const mine = rowsOf(rows, run.run_id).map((data) => JSON.parse(data));
      assert.equal(
        mine[0].target,
        `fleet:${run.node}/${run.root}/${run.run_id}`,
      );
      assert.equal(mine[0].root, `fleet:${run.node}.${run.root}`);
      assert.equal(mine.at(-1).status, "running");
      assert.equal(mine.at(-1).runner, "alive");
    }
    for (const text of served.seen) assert.ok(!text.includes(PASSWORD));
    const { code, stderr } = await served.dashboard.stop();
    assert.equal(code, 143);
    assert.ok(!stderr.includes(PASSWORD), stderr);
  },
});

Deno.test({
  name:
    "a fleet run's page streams its events with id: its seq and data: its stored line, and a steer posted through its form lands in its log as web:NAME",
  ignore,
  async fn(): Promise<void> {
    await using served = await servedFleet();
    const run = served.fleetRuns[0]!;
    const page = await served.get(runPath(run));
    assert.equal(page.status, 200);
    assert.ok(page.body.includes(run.run_id));
    assert.match(page.body, /<form[^>]* action="[^"]*\/steer"/);
    // The stored lines, byte for byte, from seq 1.
    const messages = await readStream(
      served,
      `${runPath(run)}/events`,
      (all) => all.filter((m) => m.event === null).length >= 12,
    );
    const events = messages.filter((m) => m.event === null);
    assert.deepEqual(
      events.map((m) => Number(m.id)),
      Array.from({ length: events.length }, (_, i) => i + 1),
    );
    const stored = (await Deno.readTextFile(
      join(served.packets[0]!.stateRoot, "control", "events.jsonl"),
    )).split("\n").filter(Boolean);
    for (const m of events) {
      assert.equal(m.data, stored[Number(m.id) - 1], `seq ${m.id}`);
    }
    const snapshot = messages.find((m) => m.event === "snapshot");
    assert.equal(JSON.parse(snapshot!.data).run_id, run.run_id);
    // Resumed after Last-Event-ID: the next seq, no gap.
    const after = await fetch(
      `${served.dashboard.origin}${runPath(run)}/events`,
      {
        headers: { cookie: served.dashboard.cookie, "last-event-id": "5" },
      },
    );
    for await (const m of sse(after)) {
      if (m.event !== null) continue;
      assert.equal(m.id, "6");
      assert.equal(m.data, stored[5]);
      break;
    }
    // The steer form, posted as the page posts it.
    const response = await fetch(
      `${served.dashboard.origin}${runPath(run)}/steer`,
      {
        method: "POST",
        headers: {
          cookie: served.dashboard.cookie,
          origin: served.dashboard.origin,
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ text: "look at the fleet <b>now</b>" }),
      },
    );
    const answer = await response.json();
    served.seen.push(JSON.stringify(answer));
    assert.equal(response.status, 200, JSON.stringify(answer));
    assert.ok(["accepted", "applied"].includes(answer.outcome), answer.outcome);
    const logged = await waitFor(
      "the steer in the run's log",
      async () =>
        (await readJsonl(
          join(served.packets[0]!.stateRoot, "control", "log.jsonl"),
        )).find((entry) =>
          entry.request_id === answer.request_id && entry.outcome === "applied"
        ),
    );
    assert.equal(logged.author, "web:tester");
    assert.equal(logged.command, "steer");
    assert.deepEqual(
      (logged.params as { text: string }).text,
      "look at the fleet <b>now</b>",
    );
    // The page shows it from the fleet's copy of the log, escaped.
    const shown = await waitFor("the steer on the run page", async () => {
      const again = await served.get(runPath(run));
      return again.body.includes("look at the fleet") ? again.body : null;
    });
    assert.ok(shown.includes("look at the fleet &lt;b&gt;now&lt;/b&gt;"));
    assert.ok(!shown.includes("<b>now</b>"));
    for (const text of served.seen) assert.ok(!text.includes(PASSWORD));
    const { stderr } = await served.dashboard.stop();
    assert.ok(!stderr.includes(PASSWORD), stderr);
  },
});

Deno.test({
  name:
    "serve with a fleet TARGET shows that run only, and a fleet TARGET without a fleet is a usage error",
  ignore,
  async fn(): Promise<void> {
    const none = await runCli(["serve", "fleet:some-run"], {
      unsetEnv: ["PROMPT_RUNNER_FLEET"],
    });
    assert.equal(none.code, 2, none.stderr);
    assert.match(
      none.stderr,
      /^error: The fleet TARGET "fleet:some-run" needs a fleet: give --fleet URL/,
    );
    // Started on the first run's TARGET: the second is not shown.
    await using served = await servedFleet([]);
    const [first, second] = served.fleetRuns as [FleetRun, FleetRun];
    await served.dashboard.stop();
    const only = await serve([
      `fleet:${first.root}/${first.run_id}`,
      "--fleet",
      served.url,
    ]);
    try {
      const response = await fetch(`${only.origin}/`, {
        headers: { cookie: only.cookie },
      });
      const body = await response.text();
      assert.ok(body.includes(first.run_id));
      assert.ok(!body.includes(second.run_id));
      const other = await fetch(`${only.origin}${runPath(second)}`, {
        headers: { cookie: only.cookie },
      });
      await other.body?.cancel();
      assert.equal(other.status, 404);
    } finally {
      await only.stop();
    }
  },
});

Deno.test({
  name:
    "serve --fleet exits 4 with the password masked when the fleet cannot be reached or refuses the password",
  ignore,
  async fn(): Promise<void> {
    const port = freePort();
    const down = await runCli([
      "serve",
      "--fleet",
      `nats://ops:${PASSWORD}@127.0.0.1:${port}`,
    ]);
    assert.equal(down.code, 4, down.stderr);
    assert.equal(down.stdout, "");
    assert.ok(
      down.stderr.startsWith(
        `error: Cannot reach the fleet at nats://ops:***@127.0.0.1:${port}: `,
      ),
      down.stderr,
    );
    assert.ok(!down.stderr.includes(PASSWORD));
    await using servers = await NatsServers.start(1, {
      extra: `authorization { user: ops, password: "${PASSWORD}" }`,
    });
    const wrong = "not-the-password";
    const refused = await runCli([
      "serve",
      "--fleet",
      `nats://ops:${wrong}@127.0.0.1:${servers.nodes[0]!.port}`,
    ]);
    assert.equal(refused.code, 4, refused.stderr);
    assert.equal(refused.stdout, "");
    assert.match(
      refused.stderr,
      /^error: Cannot reach the fleet at nats:\/\/ops:\*\*\*@127\.0\.0\.1:\d+: /,
    );
    assert.ok(!refused.stderr.includes(wrong), refused.stderr);
  },
});

Deno.test({
  name:
    "serve --fleet goes on when the fleet is lost: a run page says the fleet does not answer (503, the password masked), a warning until it answers again, and the pages come back with the fleet",
  ignore,
  async fn(): Promise<void> {
    await using served = await servedFleet();
    const run = served.fleetRuns[0]!;
    assert.equal((await served.get(runPath(run))).status, 200);
    // The runs page's stream keeps the shared watch reading the fleet; its
    // rows say when the watch read the fleet again.
    const rows: { elapsed_ms: number; at: "before" | "after" }[] = [];
    let phase: "before" | "after" = "before";
    const leave = new AbortController();
    const stream = await fetch(`${served.dashboard.origin}/runs/stream`, {
      headers: { cookie: served.dashboard.cookie },
      signal: leave.signal,
    });
    const reading = (async () => {
      for await (const m of sse(stream)) {
        served.seen.push(m.data);
        const row = JSON.parse(m.data);
        if (row.run === run.run_id) rows.push({ ...row, at: phase });
      }
    })();
    try {
      await waitFor("the run's row", () => Promise.resolve(rows.length > 0));
      await served.servers.kill(0);
      const down = await waitFor(
        "a run page while the fleet is down",
        async () => {
          const page = await served.get(runPath(run));
          return page.status === 503 ? page.body : null;
        },
      );
      assert.match(
        down,
        /The fleet at nats:\/\/ops:\*\*\*@127\.0\.0\.1:\d+ did not answer( \([^)]*\))?: /,
      );
      phase = "after";
      const before = Math.max(...rows.map((row) => row.elapsed_ms));
      await served.servers.restart(0);
      await waitFor(
        "the run page with the fleet back",
        async () => (await served.get(runPath(run))).status === 200,
        60_000,
      );
      // The runs page still lists the run, and its row moves on again.
      assert.ok((await served.get("/")).body.includes(run.run_id));
      await waitFor(
        "the run's row read from the fleet again",
        () =>
          Promise.resolve(
            rows.some((row) => row.at === "after" && row.elapsed_ms > before),
          ),
        60_000,
      );
    } finally {
      leave.abort();
      await reading.catch(() => {});
    }
    for (const text of served.seen) assert.ok(!text.includes(PASSWORD));
    const { stderr } = await served.dashboard.stop();
    assert.ok(!stderr.includes(PASSWORD), stderr);
    // Warned once while it does not answer, told when it answers again.
    const lines = stderr.split("\n").filter((line) => line.includes("fleet"));
    assert.ok(lines.length >= 2, stderr);
    lines.forEach((line, i) =>
      assert.match(
        line,
        i % 2 === 0
          ? /^warning: cannot read the runs of the fleet at nats:\/\/ops:\*\*\*@\S+: .+; the dashboard shows what it read last, and tries again$/
          : /^the fleet at nats:\/\/ops:\*\*\*@\S+ answers again$/,
        stderr,
      )
    );
  },
});
