/**
 * The dashboard fuzzer's checks can fail: each passes what a sound server
 * does and fires on one planted violation, and its raw exchange tells an
 * answer from a silent close and a refused connect.
 */

import assert from "node:assert/strict";
import { Rng, Violations } from "../../../scripts/_harness/mod.ts";
import {
  exchange,
  type Fuzzed,
  oversizedRequest,
  randomRequest,
} from "../../../scripts/fuzz_dashboard/actors/requests.ts";
import {
  checkAnswer,
  checkFollowed,
  checkLimits,
  checkServer,
  MEMORY_LIMIT_MIB,
  paceRatio,
} from "../../../scripts/fuzz_dashboard/audits.ts";

const encoder = new TextEncoder();

const TARGET = {
  port: 9,
  origin: "http://127.0.0.1:9",
  cookie: "pr_token_9=t",
  run: "/run/r-000000000000/r1",
  root: "r-000000000000",
};

Deno.test("checkAnswer() passes a documented status and fires on none, an undocumented one, a refused connect and an unexpected one", () => {
  const random: Fuzzed = { kind: "random", bytes: encoder.encode("GET /") };
  const big: Fuzzed = { kind: "big", bytes: new Uint8Array(), expect: [431] };
  const ok = new Violations();
  for (const status of [200, 400, 401, 403, 404, 405, 409, 413, 503, 505]) {
    checkAnswer(random, { status, closed: true }, ok);
  }
  checkAnswer(big, { status: 431, closed: true }, ok);
  // A server at its cap answers what it closes to make room with its 503.
  checkAnswer(big, { status: 503, closed: true }, ok);
  assert.deepEqual(ok.report(), []);
  const cases: [Fuzzed, number, string][] = [
    [random, 500, "documented statuses"],
    [random, 0, "every complete request answered"],
    [random, -1, "server accepts"],
    [big, 401, "documented statuses"],
  ];
  for (const [sent, status, check] of cases) {
    const v = new Violations();
    checkAnswer(sent, { status, closed: true }, v);
    assert.deepEqual(v.checks, [check], `${sent.kind} ${status}`);
  }
});

Deno.test("checkLimits() fires for a kind over a limit sent 3 times or more that never got the limit's own status", () => {
  const ok = new Violations();
  checkLimits(
    new Map([
      ["head over 32 KiB", { sent: 9, enforced: 1 }],
      ["200 headers", { sent: 2, enforced: 0 }],
    ]),
    ok,
  );
  assert.deepEqual(ok.report(), []);
  const v = new Violations();
  checkLimits(new Map([["declared body", { sent: 3, enforced: 0 }]]), v);
  assert.deepEqual(v.checks, ["each limit enforced"]);
});

Deno.test("checkFollowed() passes every event once in order and fires on a gap, a duplicate, a changed line and a short stream", () => {
  const stored = ["a", "b", "c"];
  const whole = stored.map((data, i) => ({ id: i + 1, data }));
  const ok = new Violations();
  checkFollowed("f", whole, stored, ok);
  assert.deepEqual(ok.report(), []);
  for (
    const received of [
      [whole[0]!, whole[2]!],
      [whole[0]!, whole[0]!, whole[1]!, whole[2]!],
      [whole[0]!, { id: 2, data: "B" }, whole[2]!],
      whole.slice(0, 2),
    ]
  ) {
    const v = new Violations();
    checkFollowed("f", received, stored, v);
    assert.deepEqual(v.checks, ["followers get every event once"]);
  }
});

Deno.test("paceRatio() compares the medians, and checkServer() fires on a slow pace, memory over the bound, a death, a bad exit and stray output", () => {
  assert.equal(paceRatio([100, 200, 150], [90, 135, 300]), 0.9);
  assert.equal(paceRatio([100, 200], [75, 225]), 1);
  const sound = {
    ratio: 0.95,
    peak_rss_mib: 120,
    exit_code: 143,
    died_during: false,
    stderr:
      "warning: the dashboard cannot accept a connection: Too many open files (os error 24); it closes …\n",
  };
  const ok = new Violations();
  checkServer(sound, ok);
  assert.deepEqual(ok.report(), []);
  const cases: [Partial<typeof sound>, string][] = [
    [{ ratio: 0.89 }, "the run keeps its pace"],
    [{ ratio: NaN }, "the run keeps its pace"],
    [{ peak_rss_mib: MEMORY_LIMIT_MIB + 1 }, "memory bounded"],
    [{ died_during: true }, "server never dies"],
    [{ exit_code: 1 }, "server never dies"],
    [{ stderr: "error: Uncaught (in promise) Http: Error\n" }, "server output"],
  ];
  for (const [change, check] of cases) {
    const v = new Violations();
    checkServer({ ...sound, ...change }, v);
    assert.deepEqual(v.checks, [check], JSON.stringify(change));
  }
});

Deno.test("the fuzzer's requests are complete: each random and oversized one ends its head, so a server can answer it", () => {
  const rng = new Rng(7);
  for (let i = 0; i < 500; i++) {
    const sent = i % 5 === 0
      ? oversizedRequest(rng, TARGET)
      : randomRequest(rng, TARGET);
    const text = new TextDecoder("latin1").decode(sent.bytes);
    assert.ok(text.includes("\r\n\r\n"), `${sent.kind}: ${text.slice(0, 80)}`);
  }
});

Deno.test("exchange() reads a status, tells a close without an answer apart, and a connect refused", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  const served = (async () => {
    for (let i = 0; i < 2; i++) {
      const conn = await listener.accept();
      const buffer = new Uint8Array(1024);
      await conn.read(buffer);
      if (i === 0) {
        await conn.write(
          encoder.encode(
            "HTTP/1.1 404 Not Found\r\ncontent-length: 2\r\n\r\nno",
          ),
        );
      }
      conn.close();
    }
  })();
  const request = encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  assert.deepEqual(await exchange(port, request), {
    status: 404,
    closed: true,
  });
  assert.deepEqual(await exchange(port, request), { status: 0, closed: true });
  await served;
  listener.close();
  assert.equal((await exchange(port, request)).status, -1);
});
