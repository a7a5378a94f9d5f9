/**
 * The dashboard's HTTP server at its connection cap: a connection it is
 * answering with a refusal (a bad head, a body over the limit) is busy, not
 * waiting, so newcomers never close it before its answer is out; and one
 * closed to make room is told so (503) before it is closed, and only once it
 * has waited its grace.
 */

import assert from "node:assert/strict";
import { HttpServer } from "../../commands/serve/_http.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Reads until the peer closes (or 10 s pass); what arrived. */
async function readAll(conn: Deno.Conn): Promise<string> {
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch {
      // Closed.
    }
  }, 10_000);
  let text = "";
  const buffer = new Uint8Array(4096);
  try {
    for (;;) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      text += decoder.decode(buffer.subarray(0, n));
    }
  } finally {
    clearTimeout(timer);
  }
  return text;
}

Deno.test("a connection the server is refusing is not closed to make room at the cap: its 400 arrives", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  let refusing!: () => void;
  const refused = new Promise<void>((resolve) => refusing = resolve);
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = new HttpServer({
    listeners: [listener],
    limits: { max_connections: 2 },
    handler: () => Promise.resolve(new Response("ok")),
    // The refusal's body comes only once the cap has been pressed.
    refusal: (status, message) => {
      refusing();
      return new Response(
        new ReadableStream<Uint8Array>({
          async start(controller): Promise<void> {
            await released;
            controller.enqueue(encoder.encode(message));
            controller.close();
          },
        }),
        { status },
      );
    },
  });
  const others: Deno.Conn[] = [];
  try {
    const bad = await Deno.connect({ hostname: "127.0.0.1", port });
    await bad.write(
      encoder.encode(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: abc\r\n\r\n",
      ),
    );
    await refused;
    // More connections than the cap, while the refusal is being written.
    for (let i = 0; i < 6; i++) {
      others.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    release();
    const answer = await readAll(bad);
    assert.match(answer, /^HTTP\/1\.1 400 /, `got ${JSON.stringify(answer)}`);
  } finally {
    release();
    for (const conn of others) {
      try {
        conn.close();
      } catch {
        // Closed by the server.
      }
    }
    await server.shutdown(100);
  }
});

Deno.test("a connection closed to make room at the cap gets the server's 503 first, so a request it sent unread is answered, not cut", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  const server = new HttpServer({
    listeners: [listener],
    limits: { max_connections: 2 },
    handler: () => Promise.resolve(new Response("ok")),
    refusal: (status, message) => new Response(message, { status }),
  });
  const conns: Deno.Conn[] = [];
  try {
    // The oldest waits with nothing read (as a request a loaded server has
    // not read yet); two newcomers press the cap of 2.
    const oldest = await Deno.connect({ hostname: "127.0.0.1", port });
    conns.push(oldest);
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let i = 0; i < 2; i++) {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const answer = await readAll(oldest);
    assert.match(
      answer,
      /^HTTP\/1\.1 503 Service Unavailable\r\n[^]*connection: close\r\n[^]*content-length: \d+\r\n\r\nService unavailable: the dashboard has too many connections$/,
      `got ${JSON.stringify(answer)}`,
    );
    // The newcomers were let in: the newest is answered.
    const newest = conns.at(-1)!;
    await newest.write(
      encoder.encode(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      ),
    );
    assert.match(await readAll(newest), /^HTTP\/1\.1 200 [^]*\r\n\r\nok$/);
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Closed by the server.
      }
    }
    await server.shutdown(100);
  }
});

Deno.test("at the cap, a connection is not closed to make room before it has waited 1 s: a client that sends its request late in a burst is answered, the newcomers wait", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  const server = new HttpServer({
    listeners: [listener],
    limits: { max_connections: 2 },
    handler: () => Promise.resolve(new Response("ok")),
    refusal: (status, message) => new Response(message, { status }),
  });
  const conns: Deno.Conn[] = [];
  try {
    // The client connects, a burst presses the cap, and the client's
    // request is sent 300 ms late (a loaded machine): it is still read.
    const client = await Deno.connect({ hostname: "127.0.0.1", port });
    conns.push(client);
    const started = Date.now();
    for (let i = 0; i < 4; i++) {
      conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    await client.write(
      encoder.encode(
        "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      ),
    );
    assert.match(await readAll(client), /^HTTP\/1\.1 200 [^]*\r\n\r\nok$/);
    // The newcomers were let in as their elders' grace ran out: the first
    // idle one is told 503, no sooner than 1 s after it connected.
    const first = conns[1]!;
    assert.match(await readAll(first), /^HTTP\/1\.1 503 /);
    const waited = Date.now() - started;
    assert.ok(waited >= 1_000, `closed to make room after ${waited} ms`);
  } finally {
    for (const conn of conns) {
      try {
        conn.close();
      } catch {
        // Closed by the server.
      }
    }
    await server.shutdown(100);
  }
});
