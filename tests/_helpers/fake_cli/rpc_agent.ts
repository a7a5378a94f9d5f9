/**
 * A scripted JSON-RPC agent on stdio, for the unit tests of the live-lane
 * core (`lib/providers/rpc_session.ts`): the real agents (codex app-server,
 * ACP agents) are tested end to end elsewhere; this one does on purpose
 * what they only do by accident (die mid-turn, ignore an interrupt).
 *
 * Requests it answers: `begin {mode}` → `{sessionId}`, then by mode:
 * `work` says hi and ends the turn; `hang` waits; `die` writes to stderr
 * and exits 3; `ask` asks the client `permission {kind: "edit"}` and
 * reports the answer (`answered`), then ends the turn. `steer {text}` →
 * `{}`, then (unless `mode` is `deaf`) an `echo {text}` 50 ms later and the
 * end of the turn. The notification `stop` ends the turn as interrupted,
 * unless the mode is `deaf`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

let mode = "work";
let nextId = 1000;
const waiting = new Map<number, (result: unknown) => void>();

function send(message: Record<string, unknown>): void {
  console.log(JSON.stringify({ jsonrpc: "2.0", ...message }));
}

function notify(method: string, params: unknown): void {
  send({ method, params });
}

function ask(method: string, params: unknown): Promise<unknown> {
  const id = nextId++;
  send({ id, method, params });
  return new Promise((resolve) => waiting.set(id, resolve));
}

async function handle(message: Record<string, unknown>): Promise<void> {
  const id = message.id as number | undefined;
  const params = (message.params ?? {}) as Record<string, unknown>;
  if (message.method === undefined && id !== undefined) {
    waiting.get(id)?.(message.result ?? message.error);
    return;
  }
  switch (message.method) {
    case "initialize":
      send({ id, result: { ok: true } });
      console.log("a line that is not JSON-RPC");
      return;
    case "begin":
      mode = String(params.mode);
      send({ id, result: { sessionId: "s-1" } });
      if (mode === "work") {
        notify("say", { text: "hi" });
        notify("done", {});
      } else if (mode === "die") {
        // As codex does: the error, then a long Rust backtrace.
        console.error("boom: the agent fell over\n\nStack backtrace:");
        for (let i = 0; i < 8; i++) console.error(`   ${i}: <unknown>`);
        Deno.exit(3);
      } else if (mode === "ask") {
        const answer = await ask("permission", { kind: "edit" });
        notify("answered", { answer });
        notify("done", {});
      }
      return;
    case "steer":
      send({ id, result: {} });
      if (mode === "deaf") return;
      setTimeout(() => {
        notify("echo", { text: params.text });
        notify("done", {});
      }, 50);
      return;
    case "stop":
      if (mode !== "deaf") notify("done", { interrupted: true });
      return;
  }
}

const decoder = new TextDecoder();
let buffer = "";
for await (const chunk of Deno.stdin.readable) {
  buffer += decoder.decode(chunk, { stream: true });
  let newline;
  while ((newline = buffer.indexOf("\n")) >= 0) {
    const line = buffer.slice(0, newline);
    buffer = buffer.slice(newline + 1);
    if (line.trim()) handle(JSON.parse(line));
  }
}
