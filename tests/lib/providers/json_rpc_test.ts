import assert from "node:assert/strict";
import { JsonRpcError, JsonRpcPeer } from "../../../lib/providers/json_rpc.ts";

function peer(
  handlers: {
    notification?: (method: string, params: unknown) => void;
    request?: (method: string, params: unknown) => unknown;
  } = {},
  write: (line: string) => Promise<void> = () => Promise.resolve(),
): { peer: JsonRpcPeer; sent: Record<string, unknown>[] } {
  const sent: Record<string, unknown>[] = [];
  const rpc = new JsonRpcPeer(async (line) => {
    sent.push(JSON.parse(line));
    await write(line);
  }, {
    notification: handlers.notification ?? (() => {}),
    request: handlers.request ?? (() => null),
  });
  return { peer: rpc, sent };
}

const tick = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

Deno.test("JsonRpcPeer pairs answers with their requests by id, in any order, and turns an error answer into a JsonRpcError", async () => {
  const { peer: rpc, sent } = peer();
  const first = rpc.request("a", { n: 1 });
  const second = rpc.request("b", null);
  assert.deepEqual(sent.map((m) => [m.jsonrpc, m.method, m.params]), [
    ["2.0", "a", { n: 1 }],
    ["2.0", "b", null],
  ]);
  assert.notEqual(sent[0]!.id, sent[1]!.id);
  assert.equal(rpc.waiting, 2);
  assert.equal(
    rpc.receive({
      jsonrpc: "2.0",
      id: sent[1]!.id,
      error: { code: -32601, message: "no such method", data: { m: "b" } },
    }),
    true,
  );
  rpc.receive({ jsonrpc: "2.0", id: sent[0]!.id, result: { ok: 1 } });
  assert.deepEqual(await first, { ok: 1 });
  await assert.rejects(second, (error: unknown) => {
    assert.ok(error instanceof JsonRpcError);
    assert.equal(error.code, -32601);
    assert.equal(error.message, "no such method");
    assert.deepEqual(error.data, { m: "b" });
    return true;
  });
  assert.equal(rpc.waiting, 0);
  // A stray answer is ignored.
  assert.equal(rpc.receive({ jsonrpc: "2.0", id: 999, result: 1 }), true);
});

Deno.test("JsonRpcPeer hands notifications on and answers the agent's requests from the handler: a result, a JsonRpcError, or an internal error", async () => {
  const notes: [string, unknown][] = [];
  const { peer: rpc, sent } = peer({
    notification: (method, params) => notes.push([method, params]),
    request: (method) => {
      if (method === "allow") return { outcome: "allowed" };
      if (method === "refuse") throw new JsonRpcError(-32000, "refused", 7);
      if (method === "nothing") return undefined;
      throw new Error("handler bug");
    },
  });
  rpc.receive({ jsonrpc: "2.0", method: "update", params: { x: 1 } });
  rpc.receive({ jsonrpc: "2.0", id: 5, method: "allow", params: {} });
  rpc.receive({ jsonrpc: "2.0", id: "s", method: "refuse" });
  rpc.receive({ jsonrpc: "2.0", id: 6, method: "nothing" });
  rpc.receive({ jsonrpc: "2.0", id: 7, method: "broken" });
  await tick();
  assert.deepEqual(notes, [["update", { x: 1 }]]);
  // Answers go out as each is ready: compare them by id.
  sent.sort((a, b) => String(a.id).localeCompare(String(b.id)));
  assert.deepEqual(sent, [
    { jsonrpc: "2.0", id: 5, result: { outcome: "allowed" } },
    { jsonrpc: "2.0", id: 6, result: null },
    { jsonrpc: "2.0", id: 7, error: { code: -32603, message: "handler bug" } },
    {
      jsonrpc: "2.0",
      id: "s",
      error: { code: -32000, message: "refused", data: 7 },
    },
  ]);
});

Deno.test("JsonRpcPeer says a line that is not JSON-RPC is not its own", () => {
  const { peer: rpc } = peer();
  for (const line of [null, 7, "text", [], { type: "event" }, { id: 1 }]) {
    assert.equal(rpc.receive(line), false, JSON.stringify(line));
  }
});

Deno.test("JsonRpcPeer rejects what waits when closed, and every later request at once; a timed-out request rejects naming its method", async () => {
  const { peer: rpc, sent } = peer();
  const slow = rpc.request("thread/start", {}, { timeoutMs: 20 });
  await assert.rejects(slow, /thread\/start: no answer within 20 ms/);
  const pending = rpc.request("turn/start", {});
  rpc.close("the agent ended");
  await assert.rejects(pending, /turn\/start: the agent ended/);
  await assert.rejects(rpc.request("x", {}), /x: the agent ended/);
  await rpc.notify("y", {});
  assert.deepEqual(sent.map((m) => m.method), ["thread/start", "turn/start"]);
});

Deno.test("JsonRpcPeer rejects a request whose write failed", async () => {
  const { peer: rpc } = peer({}, () => Promise.reject(new Error("EPIPE")));
  await assert.rejects(rpc.request("a", {}), /EPIPE/);
  assert.equal(rpc.waiting, 0);
});
