/**
 * `prompt_runner serve` survives its clients (issue 19): a flood of
 * connections beyond its open-file limit, half-sent requests and idle
 * connections, more connections than its cap, and request bodies over an
 * action's limit. Real server processes, raw connections, and its memory
 * read from /proc.
 */

import assert from "node:assert/strict";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { HTTP_LIMITS } from "../../commands/serve/_http.ts";
import { ACTION_BODY_LIMITS } from "../../commands/serve/_server.ts";
import { runCli } from "../_helpers/run_cli.ts";
import {
  freePort,
  Inspector,
  memoryOf,
  openFiles,
  parseResponse,
  rawRequest,
  readToEnd,
  rootKey,
  serve,
  waitForServer,
} from "../_helpers/serve_process.ts";

/** The documented limits (README "Dashboard", `serve --help`). */
const MAX_CONNECTIONS = 256;
const HEADERS_TIMEOUT_MS = 10_000;
const IDLE_TIMEOUT_MS = 10_000;
const STEER_BODY_LIMIT = 256 * 1024;

Deno.test("serve's limits are the ones its help and these tests name", async () => {
  assert.deepEqual(HTTP_LIMITS, {
    max_connections: MAX_CONNECTIONS,
    headers_timeout_ms: HEADERS_TIMEOUT_MS,
    idle_timeout_ms: IDLE_TIMEOUT_MS,
    body_timeout_ms: 60_000,
    write_timeout_ms: 30_000,
    max_head_bytes: 32 * 1024,
    room_grace_ms: 1_000,
  });
  assert.deepEqual(ACTION_BODY_LIMITS, {
    steer: STEER_BODY_LIMIT,
    view: 16 * 1024,
    amend: 256 * 1024,
    relax: 256 * 1024,
  });
  const help = (await runCli(["serve", "--help"])).stdout.replace(/\s+/g, " ");
  for (
    const phrase of [
      "at most 256 connections",
      "once that one has waited 1 s",
      "head must arrive within 10 s and be at most 32 KiB (431)",
      "its body within 60 s with no 10 s pause",
      "closed after 10 s without a request",
      "reads nothing for 30 s",
      "A form is at most 256 KiB (a view change 16 KiB)",
      "refused with 413",
    ]
  ) {
    assert.ok(help.includes(phrase), `serve --help says "${phrase}"`);
  }
});

const encoder = new TextEncoder();

/** Opens a connection, or `null` when it is refused or takes over 5 s. */
async function connect(port: number): Promise<Deno.Conn | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const attempt = Deno.connect({ hostname: "127.0.0.1", port });
  const result = await Promise.race([
    attempt.catch(() => null),
    new Promise<"late">((resolve) =>
      timer = setTimeout(resolve, 5_000, "late")
    ),
  ]).finally(() => clearTimeout(timer));
  if (result === "late") {
    void attempt.then((conn) => conn.close(), () => {});
    return null;
  }
  return result;
}

function closeAll(conns: Deno.Conn[]): void {
  for (const conn of conns) {
    try {
      conn.close();
    } catch {
      // Closed by the server already.
    }
  }
}

/** The runs page's HTML on a connection of its own, or `null` when not answered 200. */
async function page(origin: string, cookie: string): Promise<string | null> {
  const { host, port } = new URL(origin);
  const response = await rawRequest(
    Number(port),
    `GET / HTTP/1.1\r\nHost: ${host}\r\nCookie: ${cookie}\r\nConnection: close\r\n\r\n`,
  ).catch(() => null);
  return response?.status === 200 ? response.body : null;
}

/** Whether the server closed `conn` (EOF or reset) within `ms`. */
async function closedWithin(conn: Deno.Conn, ms: number): Promise<boolean> {
  return (await readToEnd(conn, ms)).closed;
}

Deno.test("serve flooded with more connections than it may open files keeps serving: no crash, a normal client is answered during and after the flood", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  await using server = await serve([packet.dir], { fileLimit: 256 });
  const flood: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 600; i++) {
      const conn = await connect(server.port);
      if (conn !== null) flood.push(conn);
      // Half of them send the start of a request, and no more.
      if (conn !== null && i % 2 === 0) {
        await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: 127.0")).catch(
          () => {},
        );
      }
    }
    assert.equal(server.exited(), false, "serve is still running");
    // A normal client, with the flood still open (a connection the flood
    // has just made is not closed for it at once).
    const during = await waitForServer(
      server,
      "a page during the flood",
      () => page(server.origin, server.cookie),
    );
    assert.match(during, /id="runs"/);
  } finally {
    closeAll(flood);
  }
  const after = await waitForServer(
    server,
    "a page after the flood",
    () => page(server.origin, server.cookie),
  );
  assert.match(after, /id="runs"/);
  const stopped = await server.stop();
  assert.equal(stopped.code, 143, stopped.stderr);
  assert.doesNotMatch(stopped.stderr, /Uncaught|error:|\bat /);
});

Deno.test("serve closes half-sent requests within its header timeout, a stalled body and an idle kept-alive connection within its idle timeout", async () => {
  await using packet = await makePacket();
  await using server = await serve([packet.dir]);
  const host = `127.0.0.1:${server.port}`;
  const silent = await Deno.connect({
    hostname: "127.0.0.1",
    port: server.port,
  });
  const heads: Deno.Conn[] = [];
  for (let i = 0; i < 20; i++) {
    const conn = await Deno.connect({
      hostname: "127.0.0.1",
      port: server.port,
    });
    await conn.write(encoder.encode(`GET / HTTP/1.1\r\nHost: ${host}\r\n`));
    heads.push(conn);
  }
  // A head, then a body that stops after 10 of its 100 bytes.
  const body = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await body.write(encoder.encode(
    `POST /run/x/y/steer HTTP/1.1\r\nHost: ${host}\r\nCookie: ${server.cookie}\r\n` +
      `Origin: ${server.origin}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Content-Length: 100\r\n\r\ntext=hello`,
  ));
  // A whole request answered, then nothing more on that connection.
  const idle = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
  await idle.write(encoder.encode(
    `GET /static/app.css HTTP/1.1\r\nHost: ${host}\r\nCookie: ${server.cookie}\r\n\r\n`,
  ));
  const margin = 10_000;
  const [silentClosed, headsClosed, bodyClosed, idleRead] = await Promise.all([
    closedWithin(silent, HEADERS_TIMEOUT_MS + margin),
    Promise.all(heads.map((c) => closedWithin(c, HEADERS_TIMEOUT_MS + margin))),
    readToEnd(body, IDLE_TIMEOUT_MS + margin),
    readToEnd(idle, IDLE_TIMEOUT_MS + margin),
  ]);
  assert.equal(silentClosed, true, "a connection that sends nothing");
  assert.deepEqual(
    headsClosed,
    heads.map(() => true),
    "every half-sent head",
  );
  assert.equal(bodyClosed.closed, true, "a stalled body");
  assert.equal(idleRead.closed, true, "an idle kept-alive connection");
  assert.equal(parseResponse(idleRead.bytes).status, 200, "answered first");
  assert.equal(server.exited(), false);
});

Deno.test("serve keeps at most its cap of connections open: the oldest waiting ones make room, a normal client is still answered", async () => {
  await using packet = await makePacket();
  await using server = await serve([packet.dir]);
  const baseline = await openFiles(server.pid);
  const held: Deno.Conn[] = [];
  try {
    for (let i = 0; i < MAX_CONNECTIONS + 100; i++) {
      const conn = await connect(server.port);
      if (conn !== null) held.push(conn);
    }
    assert.equal(held.length, MAX_CONNECTIONS + 100, "every connect succeeds");
    await waitForServer(
      server,
      "a page with the connections held",
      () => page(server.origin, server.cookie),
    );
    // The server holds no more connections than its cap (plus fetch's).
    const open = await waitForServer(
      server,
      "the server to hold at most its cap",
      async () => {
        const n = await openFiles(server.pid);
        return n <= baseline + MAX_CONNECTIONS + 2 ? n : null;
      },
      10_000,
    );
    assert.ok(open <= baseline + MAX_CONNECTIONS + 2, `${open} open`);
  } finally {
    closeAll(held);
  }
  assert.equal(server.exited(), false);
});

Deno.test("serve refuses a body over an action's limit with 413: a Content-Length over it before reading, a chunked one as it streams, without holding it in memory", async () => {
  await using packet = await makePacket();
  await using server = await serve([packet.dir]);
  const { origin, cookie, port } = server;
  const steerPath = `/run/${rootKey(packet.stateRoot)}/some-run/steer`;

  // Content-Length over the limit: answered without a byte of the body.
  const declared = await rawRequest(
    port,
    `POST ${steerPath} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\n` +
      `Origin: ${origin}\r\nContent-Type: application/x-www-form-urlencoded\r\n` +
      `Content-Length: 300000000\r\n\r\n`,
  );
  assert.equal(declared.status, 413);
  assert.match(declared.body, /too large/i);

  // A chunked body of 256 MiB, refused as it streams.
  const before = await memoryOf(server.pid);
  const chunk = encoder.encode("text=" + "x".repeat(1024 * 1024 - 5));
  let sent = 0;
  const total = 256 * 1024 * 1024;
  const body = new ReadableStream<Uint8Array>({
    pull(controller): void {
      if (sent >= total) return controller.close();
      sent += chunk.length;
      controller.enqueue(chunk);
    },
  });
  const response = await fetch(`${origin}${steerPath}`, {
    method: "POST",
    headers: {
      cookie,
      origin,
      accept: "application/json",
      "content-type": "application/x-www-form-urlencoded",
    },
    body,
  }).catch((error) => error as Error);
  assert.ok(response instanceof Response, String(response));
  assert.equal(response.status, 413);
  await response.body?.cancel();
  const after = await memoryOf(server.pid);
  const grownMiB = (after.hwm - before.hwm) / 1024;
  assert.ok(
    grownMiB < 64,
    `VmHWM ${before.hwm} → ${after.hwm} KiB (+${grownMiB.toFixed(0)} MiB)`,
  );

  // A steer of the largest text, worst-encoded, is under the limit.
  const largest = "text=" + "%C3%A9".repeat((64 * 1024 - 4 * 1024) / 2);
  assert.ok(largest.length < STEER_BODY_LIMIT);
  const fits = await fetch(`${origin}${steerPath}`, {
    method: "POST",
    headers: {
      cookie,
      origin,
      accept: "application/json",
      "content-type": "application/x-www-form-urlencoded",
    },
    body: largest,
  });
  assert.notEqual(fits.status, 413);
  await fits.body?.cancel();
  assert.equal(server.exited(), false);
});

Deno.test("serve's heap stays flat across reconnect storms: after a full collection it does not grow storm after storm", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(20, 0) },
  });
  const ran = await runCli(["run", packet.dir]);
  assert.equal(ran.code, 0, ran.stderr);
  const snapshot = JSON.parse(
    await Deno.readTextFile(
      `${packet.stateRoot}/control/snapshot.json`,
    ),
  );
  const inspect = freePort();
  await using server = await serve([packet.dir], {
    denoFlags: [`--inspect=127.0.0.1:${inspect}`],
  });
  const inspector = await Inspector.open(inspect);
  const headers = { cookie: server.cookie };
  const run = `${server.origin}/run/${
    rootKey(packet.stateRoot)
  }/${snapshot.run_id}`;
  // 100 browsers at once (well under the cap, with the kept-alive ones of
  // the last storm): half follow the run to its end, half open the runs
  // page's stream and leave after its first row.
  const storm = async (): Promise<void> => {
    await Promise.all(Array.from({ length: 100 }, async (_, i) => {
      const response = await fetch(
        i % 2 === 0 ? `${run}/events` : `${server.origin}/runs/stream`,
        { headers },
      );
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      if (i % 2 === 0) { while (!(await reader.read()).done); }
      else await reader.read();
      await reader.cancel();
    }));
  };
  try {
    await storm();
    const first = await inspector.heapAfterGc();
    for (let n = 0; n < 16; n++) await storm();
    const last = await inspector.heapAfterGc();
    const grownKiB = (last - first) / 1024;
    assert.ok(
      grownKiB < 1_536,
      `heap ${(first / 1024).toFixed(0)} → ${
        (last / 1024).toFixed(0)
      } KiB over 16 storms of 100 streams`,
    );
  } finally {
    await inspector.close();
  }
  assert.equal(server.exited(), false);
});
