import assert from "node:assert/strict";
import { join } from "node:path";
import {
  Notifier,
  type NotifyLimits,
  type NotifyRecord,
} from "../../../lib/notify/notifier.ts";
import type { RunEvent, RunStatus } from "../../../lib/shared/events.ts";
import type { NotifyRule } from "../../../lib/shared/notify_rule.ts";
import { waitFor } from "../../_helpers/run_cli.ts";
import { webhookServer } from "../../_helpers/webhook_server.ts";

const RUN = {
  run_id: "20260101T000000Z-abc",
  state_root: "/srv/state",
  packet: "demo",
  packet_dir: "/srv/packet",
};

function finished(seq: number, status: RunStatus = "failed"): RunEvent {
  return {
    v: 1,
    seq,
    at: "2026-01-01T00:00:00.000Z",
    run_id: RUN.run_id,
    prompt_id: null,
    attempt: null,
    type: "run_finished",
    data: {
      status,
      reason: status === "completed" ? null : `prompt 01 ${status}: no`,
      prompts: { "01": status },
    },
  };
}

function attention(seq: number): RunEvent {
  return {
    v: 1,
    seq,
    at: "2026-01-01T00:00:00.000Z",
    run_id: RUN.run_id,
    prompt_id: "01",
    attempt: 2,
    type: "attention_needed",
    data: { reason: "stalled", prompt_id: "01", attempt: 2, detail: "quiet" },
  };
}

/** A notifier whose records and warnings the test reads. */
interface Harness {
  it: Notifier;
  records: NotifyRecord[];
  warnings: string[];
}

function notifier(
  rules: NotifyRule[],
  limits: Partial<NotifyLimits> = {},
): Harness {
  const records: NotifyRecord[] = [];
  const warnings: string[] = [];
  const it = new Notifier({
    rules,
    run: RUN,
    record: (record) => {
      records.push(record);
      return Promise.resolve();
    },
    warn: (_key, message) => {
      warnings.push(message);
    },
    limits: { backoffMs: 10, ...limits },
  });
  return { it, records, warnings };
}

function command(
  argv: string[],
  dir: string,
  extra: Partial<NotifyRule> = {},
): NotifyRule {
  return {
    on: ["failed", "attention"],
    command: argv,
    timeout_ms: null,
    dir,
    ...extra,
  } as NotifyRule;
}

function webhook(url: string, extra: Partial<NotifyRule> = {}): NotifyRule {
  return {
    on: ["finished"],
    webhook: url,
    timeout_ms: null,
    dir: "/",
    ...extra,
  } as NotifyRule;
}

/** Whether a process is gone (a zombie counts as alive until reaped). */
async function gone(pid: number): Promise<boolean> {
  const { success } = await new Deno.Command("sh", {
    args: ["-c", `kill -0 ${pid} 2>/dev/null`],
  }).output();
  return !success;
}

/** A command that leaves its pid and a background child's in `dir`, then hangs. */
function hanging(dir: string): string[] {
  return [
    "sh",
    "-c",
    `echo $$ > "${dir}/pid"; sleep 60 & echo $! > "${dir}/child"; wait`,
  ];
}

async function pidIn(path: string): Promise<number> {
  return await waitFor(`a pid in ${path}`, async () => {
    const text = await Deno.readTextFile(path).catch(() => "");
    return /^\d+\n$/.test(text) ? Number(text) : undefined;
  });
}

Deno.test("a command gets the event as JSON on stdin and the PROMPT_RUNNER_ variables, and is recorded applied", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const rule = command(["sh", "-c", "cat > event.json; env > env.txt"], dir);
    const { it, records } = notifier([rule]);
    const event = attention(12);
    it.observe(event);
    await it.close(30_000);
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(dir, "event.json"))),
      event,
    );
    const env = await Deno.readTextFile(join(dir, "env.txt"));
    for (
      const line of [
        "PROMPT_RUNNER_EVENT=attention",
        "PROMPT_RUNNER_EVENT_TYPE=attention_needed",
        "PROMPT_RUNNER_SEQ=12",
        `PROMPT_RUNNER_RUN_ID=${RUN.run_id}`,
        "PROMPT_RUNNER_STATE_ROOT=/srv/state",
        "PROMPT_RUNNER_PACKET=demo",
        "PROMPT_RUNNER_PACKET_DIR=/srv/packet",
        "PROMPT_RUNNER_PROMPT_ID=01",
        "PROMPT_RUNNER_REASON=stalled",
      ]
    ) assert.ok(env.split("\n").includes(line), `${line} in:\n${env}`);
    assert.ok(!env.includes("PROMPT_RUNNER_STATUS="));
    assert.deepEqual(records, [{
      params: {
        on: "attention",
        target: "sh",
        via: "command",
        seq: 12,
        type: "attention_needed",
      },
      outcome: "applied",
      reason: "exited with code 0",
      prompt_id: "01",
      attempt: 2,
    }]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a command that fails, or cannot start, is recorded rejected with why", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { it, records, warnings } = notifier([
      command(["sh", "-c", "echo 'mail: no route' >&2; exit 3"], dir),
      command([join(dir, "missing.sh")], dir),
    ]);
    it.observe(finished(5));
    await it.close(30_000);
    const reasons = records.map((r) => [r.outcome, r.reason]).sort();
    assert.deepEqual(reasons, [
      [
        "rejected",
        `cannot run "${
          join(dir, "missing.sh")
        }": not found (or its directory is gone)`,
      ],
      ["rejected", "exited with code 3: mail: no route"],
    ]);
    assert.ok(
      warnings.some((w) =>
        w.includes("a notification to sh failed: exited with code 3")
      ),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a command that passes its time limit is killed with its process group and recorded rejected", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const { it, records } = notifier([
      command(hanging(dir), dir, { timeout_ms: 300 }),
    ]);
    it.observe(finished(3));
    const pid = await pidIn(join(dir, "pid"));
    const child = await pidIn(join(dir, "child"));
    await waitFor(
      "the delivery's record",
      () => Promise.resolve(records.length === 1),
    );
    assert.equal(records[0]!.outcome, "rejected");
    assert.equal(
      records[0]!.reason,
      "did not finish within 300 ms; its process group was killed",
    );
    await waitFor("the command gone", () => gone(pid));
    await waitFor("its background child gone", () => gone(child));
    await it.close(0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("observe() returns at once while deliveries hang, and close() stops them after its grace, recording each", async () => {
  const dir = await Deno.makeTempDir();
  await using server = webhookServer(() => "hang");
  try {
    const { it, records } = notifier([
      command(hanging(dir), dir, { on: ["finished"] }),
      webhook(`${server.origin}/hook`),
    ]);
    it.observe(finished(9));
    it.observe(finished(10, "interrupted"));
    // Nothing waited for a delivery: they are all still under way.
    assert.equal(records.length, 0);
    assert.equal(it.pending, 4);
    const pid = await pidIn(join(dir, "pid"));
    await it.close(200);
    assert.equal(records.length, 4);
    for (const record of records) {
      assert.equal(record.outcome, "rejected");
      assert.match(
        record.reason,
        /the run ended and the 200 ms grace for deliveries passed/,
      );
    }
    assert.ok(
      records.some((r) =>
        r.params.via === "command" && /process group was killed/.test(r.reason)
      ),
    );
    await waitFor("the hanging command gone", () => gone(pid));
    assert.equal(it.pending, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a webhook that answers 500 is retried 3 times, then recorded rejected", async () => {
  await using server = webhookServer(() => 500);
  const { it, records } = notifier([webhook(`${server.origin}/hook`)]);
  it.observe(finished(4));
  await it.close(30_000);
  assert.equal(server.requests.length, 4);
  assert.deepEqual(records.map((r) => [r.outcome, r.reason]), [[
    "rejected",
    "HTTP 500 (4 tries)",
  ]]);
});

Deno.test("a webhook refusal other than 408 or 429 is final: not retried", async () => {
  await using server = webhookServer(() => 404);
  const { it, records } = notifier([webhook(`${server.origin}/hook`)]);
  it.observe(finished(4));
  await it.close(30_000);
  assert.equal(server.requests.length, 1);
  assert.equal(records[0]!.reason, "HTTP 404 (1 try)");
});

Deno.test("a webhook that never answers times out on each try, then is recorded rejected", async () => {
  await using server = webhookServer(() => "hang");
  const { it, records } = notifier([
    webhook(`${server.origin}/hook`, { timeout_ms: 100 }),
  ], { retries: 1 });
  it.observe(finished(4));
  await waitFor(
    "the delivery's record",
    () => Promise.resolve(records.length === 1),
  );
  assert.equal(records[0]!.outcome, "rejected");
  assert.equal(records[0]!.reason, "no answer within 100 ms (2 tries)");
  assert.equal(server.requests.length, 2);
  await it.close(0);
});

Deno.test("a webhook that answers 200 gets the event as a JSON POST; the record names it without its secrets", async () => {
  await using server = webhookServer(() => 200);
  const url = `${server.origin.replace("://", "://bot:pw@")}/hook?token=s3cret`;
  const { it, records } = notifier([
    webhook(url, { on: ["completed", "finished"] }),
  ]);
  const event = finished(21, "completed");
  it.observe(event);
  await it.close(30_000);
  assert.equal(server.requests.length, 1);
  const request = server.requests[0]!;
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/hook?token=s3cret");
  assert.equal(request.headers["content-type"], "application/json");
  assert.equal(request.headers["authorization"], `Basic ${btoa("bot:pw")}`);
  assert.deepEqual(JSON.parse(request.body), event);
  assert.deepEqual(records, [{
    params: {
      on: "completed",
      target: `${server.origin}/hook?…`,
      via: "webhook",
      seq: 21,
      type: "run_finished",
    },
    outcome: "applied",
    reason: "HTTP 200 (1 try)",
    prompt_id: null,
    attempt: null,
  }]);
  assert.ok(!JSON.stringify(records).includes("s3cret"));
  assert.ok(!JSON.stringify(records).includes("pw@"));
});

Deno.test("events no rule names are not delivered", async () => {
  await using server = webhookServer(() => 200);
  const { it, records } = notifier([
    webhook(`${server.origin}/a`, { on: ["completed"] }),
  ]);
  it.observe(finished(2, "failed"));
  it.observe(attention(3));
  it.observe({
    ...attention(4),
    type: "prompt_started",
    data: {
      prompt_id: "01",
      name: "a",
      attempt: 1,
      mode: "run",
      provider: "simulated",
      model: null,
    },
  });
  assert.equal(it.pending, 0);
  await it.close(1000);
  assert.equal(server.requests.length, 0);
  assert.equal(records.length, 0);
});

Deno.test("a flood beyond the queue's bound is dropped and recorded once, not queued without end", async () => {
  await using server = webhookServer(() => "hang");
  const { it, records } = notifier(
    [webhook(`${server.origin}/hook`, { on: ["attention"] })],
    { queue: 2, concurrency: 1 },
  );
  for (let seq = 1; seq <= 10; seq++) it.observe(attention(seq));
  // One under way, two waiting; the other seven were dropped.
  assert.equal(it.pending, 3);
  await it.close(100);
  const dropped = records.find((r) => r.params.dropped !== undefined);
  assert.ok(dropped, JSON.stringify(records));
  assert.equal(dropped.params.dropped, 7);
  assert.equal(dropped.params.seq, 4);
  assert.match(
    dropped.reason,
    /^dropped: 2 notifications were already waiting; 7 dropped, for events 4 to 10$/,
  );
  assert.equal(
    records.filter((r) => r.reason.startsWith("not started: ")).length,
    2,
  );
  assert.equal(records.length, 4);
});

Deno.test("a record that cannot be written is a warning, never an error", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const warnings: string[] = [];
    const it = new Notifier({
      rules: [command(["true"], dir)],
      run: RUN,
      record: () => Promise.reject(new Error("disk full")),
      warn: (_key, message) => {
        warnings.push(message);
      },
    });
    it.observe(finished(1));
    await it.close(30_000);
    assert.deepEqual(warnings, [
      "notify: cannot log a notification: disk full",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
