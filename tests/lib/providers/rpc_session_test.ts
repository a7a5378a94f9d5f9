import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { RpcSession } from "../../../lib/providers/rpc_session.ts";
import {
  type Acknowledger,
  type SessionRequest,
  TurnOverError,
} from "../../../lib/providers/provider.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";
import { isRecord } from "../../../lib/shared/is_record.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { sessionRequest as request } from "../../_helpers/session_request.ts";

const AGENT = fileURLToPath(
  new URL("../../_helpers/fake_cli/rpc_agent.ts", import.meta.url),
);

/** A live-lane session speaking the fake agent's little protocol. */
class FakeLane extends RpcSession {
  readonly mode: string;
  readonly answers: unknown[] = [];
  interrupts = 0;
  #pending = new Map<string, Acknowledger>();

  constructor(request: SessionRequest, mode: string, graceMs = 3000) {
    super({
      name: "fake",
      bin: Deno.execPath(),
      args: ["run", "--quiet", AGENT],
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", NO_COLOR: "1" },
      request,
      resumeId: null,
      model: "fake-1",
      version: "fake 1.0",
      graceMs,
    });
    this.mode = mode;
  }

  protected async begin(): Promise<void> {
    await this.rpc.request("initialize", {});
    const result = await this.rpc.request("begin", { mode: this.mode });
    if (isRecord(result)) this.setSessionId(String(result.sessionId));
  }

  protected onNotification(method: string, params: unknown): void {
    const p = isRecord(params) ? params : {};
    if (method === "say") {
      this.emit({
        type: "message_received",
        data: { role: "assistant", content: String(p.text) },
      });
    } else if (method === "echo") {
      this.#pending.get(String(p.text))?.acknowledge("echo");
    } else if (method === "answered") {
      this.answers.push(p.answer);
    } else if (method === "done") {
      this.emit({ type: "run_completed", data: { stop_reason: "end_turn" } });
      this.endTurn();
    }
  }

  protected onRequest(method: string, params: unknown): unknown {
    return { decided: method, params };
  }

  protected async steer(text: string, ack: Acknowledger): Promise<void> {
    this.#pending.set(text, ack);
    await this.rpc.request("steer", { text });
  }

  protected async interruptTurn(): Promise<void> {
    this.interrupts++;
    await this.rpc.notify("stop", {});
  }
}

async function drain(session: FakeLane): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of session.events) events.push(event);
  return events;
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

Deno.test("an RpcSession announces the agent's session with its pid, maps its notifications, keeps other lines in the transcript, and ends with the turn", async () => {
  await withTempDir(async (dir) => {
    const notes: string[] = [];
    const session = new FakeLane(request(dir, notes), "work");
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_received",
      "run_completed",
    ]);
    assert.equal(events[0]!.data.provider_session_id, "s-1");
    assert.equal(events[0]!.data.pid, session.pid);
    assert.equal(events[0]!.data.cli_version, "fake 1.0");
    assert.equal(session.meta.session_id, "s-1");
    assert.ok(
      notes.includes("[fake] a line that is not JSON-RPC"),
      notes.join("\n"),
    );
    assert.equal(alive(session.pid), false, "the agent was ended");
  });
});

Deno.test("an RpcSession whose agent dies mid-turn reports transport_disconnect with stderr's tail, its error and not the backtrace after it", async () => {
  await withTempDir(async (dir) => {
    const session = new FakeLane(request(dir, []), "die");
    const events = await drain(session);
    await session.close();
    const failed = events.find((e) => e.type === "run_failed");
    assert.ok(failed, JSON.stringify(events));
    assert.equal(failed.data.error_code, "transport_disconnect");
    assert.match(
      String(failed.data.error_message),
      /fake exited \(code 3\) without finishing its turn; stderr: boom: the agent fell over$/,
    );
    assert.equal(events[0]!.type, "run_started");
  });
});

Deno.test("an RpcSession answers the agent's requests from the subclass at once", async () => {
  await withTempDir(async (dir) => {
    const session = new FakeLane(request(dir, []), "ask");
    const events = await drain(session);
    await session.close();
    assert.equal(events.at(-1)!.type, "run_completed");
    assert.deepEqual(session.answers, [{
      decided: "permission",
      params: { kind: "edit" },
    }]);
  });
});

Deno.test("an RpcSession's steer is delivered only at the agent's acknowledgement; one sent once the turn is over meets TurnOverError", async () => {
  await withTempDir(async (dir) => {
    const session = new FakeLane(request(dir, []), "hang");
    const iterator = session.events[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, "run_started");
    let acknowledged = false;
    const delivery = await session.send("use tabs");
    delivery.acknowledged.then(() => acknowledged = true);
    assert.equal(acknowledged, false, "written is not delivered");
    const rest: string[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      rest.push(next.value.type);
    }
    const ack = await delivery.acknowledged;
    assert.equal(ack.mechanism, "echo");
    assert.ok(!Number.isNaN(Date.parse(ack.at)));
    assert.deepEqual(rest, ["run_completed"]);
    await assert.rejects(() => session.send("late"), TurnOverError);
    await session.close();
  });
});

Deno.test("an RpcSession refuses a steer the agent never acknowledged when the turn ends", async () => {
  await withTempDir(async (dir) => {
    const session = new FakeLane(request(dir, []), "deaf", 300);
    const iterator = session.events[Symbol.asyncIterator]();
    await iterator.next();
    const delivery = await session.send("use tabs");
    session.interrupt();
    while (!(await iterator.next()).done);
    await assert.rejects(
      delivery.acknowledged,
      /the turn ended before the agent acknowledged the steer/,
    );
    await session.close();
  });
});

Deno.test("an RpcSession interrupt asks the protocol first; a turn that does not end is stopped by signal, with no failure reported", async () => {
  await withTempDir(async (dir) => {
    const obey = new FakeLane(request(dir, []), "hang");
    const first = obey.events[Symbol.asyncIterator]();
    await first.next();
    obey.interrupt();
    obey.interrupt();
    const obeyed: string[] = [];
    for (let next = await first.next(); !next.done; next = await first.next()) {
      obeyed.push(next.value.type);
    }
    assert.equal(obey.interrupts, 1, "interrupt is idempotent");
    assert.deepEqual(obeyed, [], "the interrupted turn's ending is dropped");
    await obey.close();

    const notes: string[] = [];
    const deaf = new FakeLane(request(dir, notes), "deaf", 300);
    const second = deaf.events[Symbol.asyncIterator]();
    await second.next();
    deaf.interrupt();
    const after: string[] = [];
    for (
      let next = await second.next();
      !next.done;
      next = await second.next()
    ) {
      after.push(next.value.type);
    }
    await deaf.close();
    assert.deepEqual(after, [], "no failure after our own interrupt");
    assert.ok(
      notes.some((n) =>
        /SIGINT to the fake CLI \(its turn had not ended 300 ms/.test(n)
      ),
      notes.join("\n"),
    );
    assert.equal(alive(deaf.pid), false);
  });
});
