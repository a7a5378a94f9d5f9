import assert from "node:assert/strict";
import type {
  CliProfile,
  LineResult,
} from "../../../lib/providers/cli_profile.ts";
import {
  createCliProvider,
  maskedArgv,
} from "../../../lib/providers/cli_provider.ts";
import type { Session } from "../../../lib/providers/provider.ts";
import type { ProviderEvent } from "../../../lib/shared/events.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";
import { sessionRequest as request } from "../../_helpers/session_request.ts";

/**
 * A profile for `sh -c SCRIPT`: each JSON line `{"id"}` names the session,
 * `{"say"}` is a message, `{"end": "ok"|"fail"|"aborted"}` ends a turn,
 * `{"login": true}` is fatal.
 */
function shProfile(script: string, live = false): CliProfile {
  return {
    name: "shcli",
    binName: "sh",
    defaultModel: "sh-1",
    liveInput: () => live,
    startArgs: () => ["-c", script],
    resumeArgs: (_inv, id) => ["-c", script, "sh", id],
    parser: () => ({
      line(_text: string, json: unknown): LineResult {
        const line = (json ?? {}) as Record<string, unknown>;
        if (typeof line.id === "string") {
          return { events: [], session_id: line.id };
        }
        if (typeof line.say === "string") {
          return {
            events: [{
              type: "message_received",
              data: { role: "assistant", content: line.say },
            }],
          };
        }
        if (line.login) {
          return {
            events: [],
            fatal: { kind: "provider_auth_claim", message: "log in first" },
          };
        }
        if (line.end === "ok") {
          return {
            events: [{ type: "run_completed", data: { stop_reason: "end" } }],
            terminal: true,
          };
        }
        if (line.end === "aborted") {
          return {
            events: [{
              type: "run_failed",
              data: { error_message: "aborted" },
            } as ProviderEvent],
            terminal: true,
          };
        }
        if (typeof line.echo === "string") {
          return { events: [], echoed: line.echo };
        }
        if (line.boom) throw new Error("parser bug");
        return { events: [] };
      },
      exit: () => null,
    }),
    ...(live
      ? {
        input: {
          prompt: (text: string) => [JSON.stringify({ prompt: text })],
          steer: (text: string) => ({
            frames: [JSON.stringify({ steer: text })],
            echo: "e-1",
          }),
        },
      }
      : {}),
  };
}

async function drain(session: Session): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of session.events) events.push(event);
  return events;
}

/** Whether a process runs (a zombie waiting for its reaper does not). */
function alive(pid: number): boolean {
  const output = new Deno.Command("ps", {
    args: ["-o", "stat=", "-p", String(pid)],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const state = new TextDecoder().decode(output.stdout).trim();
  return state !== "" && !state.startsWith("Z");
}

Deno.test("a CLI session emits run_started with the session id first, keeps non-JSON lines and event-less JSON lines (an unknown type) in the transcript, and survives a parser that throws", async () => {
  await withTempDir(async (dir) => {
    const notes: string[] = [];
    const provider = createCliProvider(shProfile(
      `echo 'warming up'; echo '{"id":"s-1"}'; echo '{"boom":1}'; echo '{"type":"mystery","n":7}'; echo '{"say":"hi"}'; echo '{"end":"ok"}'`,
    ));
    const session = await provider.start(request(dir, notes));
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_received",
      "run_completed",
    ]);
    assert.equal(events[0]?.data.session_id, "s-1");
    assert.equal(session.meta.session_id, "s-1");
    assert.ok(notes.some((n) => n === "[shcli] warming up"), notes.join("\n"));
    assert.ok(
      notes.includes('[shcli] {"type":"mystery","n":7}'),
      notes.join("\n"),
    );
    assert.ok(notes.some((n) => n.includes("unreadable shcli line")));
    assert.ok(notes.some((n) => n.startsWith("[prompt_runner] $ sh -c ")));
    assert.ok(notes.some((n) => n.includes(`TMPDIR ${dir}`)));
  });
});

Deno.test("a CLI that exits without a terminal line is a transport_disconnect carrying its exit code and stderr's last lines", async () => {
  await withTempDir(async (dir) => {
    const provider = createCliProvider(shProfile(
      `echo '{"id":"s-2"}'; printf '{"say":"cut'; echo 'socket hang up' >&2; exit 3`,
    ));
    const session = await provider.start(request(dir));
    const events = await drain(session);
    await session.close();
    const failed = events.find((e) => e.type === "run_failed");
    const error = failed!.data.provider_error!;
    assert.equal(error.kind, "transport_disconnect");
    assert.match(String(error.message), /code 3/);
    assert.match(String(error.message), /socket hang up/);
  });
});

Deno.test("interrupt() ends a CLI that ignores SIGINT with SIGKILL to its group: no failure is reported and its child is gone", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/child.pid`;
    const provider = createCliProvider(shProfile(
      `trap '' INT; sleep 300 & echo $! > ${pidFile}; echo '{"id":"s-3"}'; wait`,
    ));
    const session = await provider.start(request(dir));
    const iterator = session.events[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(first.value?.type, "run_started");
    const child = Number(await Deno.readTextFile(pidFile));
    assert.ok(alive(child));
    session.interrupt();
    const rest: ProviderEvent[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      rest.push(next.value);
    }
    await session.close();
    assert.deepEqual(rest, []);
    // Reaped by init once the group is killed; give it a moment to vanish.
    for (let i = 0; i < 50 && alive(child); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(alive(child), false);
  });
});

Deno.test("a fatal line (a login flow) is reported at once and the CLI is killed, not waited for", async () => {
  await withTempDir(async (dir) => {
    const provider = createCliProvider(
      shProfile(`echo '{"login":true}'; sleep 300`),
    );
    const session = await provider.start(request(dir));
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "error_occurred",
      "run_failed",
    ]);
    const error = events[1]?.data.provider_error as Record<string, unknown>;
    assert.equal(error.kind, "provider_auth_claim");
  });
});

Deno.test("on the live-input lane a steer's frame is written with the carry-on instruction, acknowledged by its echo, the preempted turn's ending is dropped and the stream ends after the steer's turn", async () => {
  await withTempDir(async (dir) => {
    // Reads frames; answers the first with an aborted turn once a steer
    // arrives, echoes the steer's frame, then ends the steer's turn.
    const script = `read -r first; echo '{"id":"s-4"}'; read -r steer; ` +
      `printf '%s\\n' "$steer" > ${dir}/steer.json; ` +
      `echo '{"end":"aborted"}'; echo '{"echo":"e-1"}'; echo '{"say":"steered"}'; echo '{"end":"ok"}'; ` +
      `read -r eof || exit 0`;
    const provider = createCliProvider(shProfile(script, true));
    const session = await provider.start(request(dir));
    assert.equal(session.acceptsInputAfterStart, true);
    const iterator = session.events[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, "run_started");
    const delivery = await session.send("use tabs");
    const rest: string[] = [];
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      rest.push(next.value.type);
    }
    const exit = await session.close();
    assert.equal(exit, undefined);
    assert.deepEqual(rest, ["message_received", "run_completed"]);
    const frame = JSON.parse(await Deno.readTextFile(`${dir}/steer.json`));
    assert.match(
      frame.steer,
      /^use tabs\n\n\(This is a steer from the operator/,
    );
    await assert.rejects(() => session.send("late"), /the turn is over/);
    assert.equal((await delivery.acknowledged).mechanism, "stdin_echo");
  });
});

Deno.test("on the live-input lane a steer whose frame the CLI never echoes is refused when the turn ends, not delivered", async () => {
  await withTempDir(async (dir) => {
    const script = `read -r first; echo '{"id":"s-5"}'; read -r steer; ` +
      `echo '{"end":"aborted"}'; echo '{"end":"ok"}'; read -r eof || exit 0`;
    const provider = createCliProvider(shProfile(script, true));
    const session = await provider.start(request(dir));
    const iterator = session.events[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, "run_started");
    const delivery = await session.send("use tabs");
    while (!(await iterator.next()).done);
    await session.close();
    await assert.rejects(
      delivery.acknowledged,
      /the turn ended before the CLI took it/,
    );
  });
});

Deno.test("resuming a session whose id was never reported is refused, never a fresh session", async () => {
  await withTempDir(async (dir) => {
    const provider = createCliProvider(shProfile(`echo '{"end":"ok"}'`));
    await assert.rejects(
      () =>
        provider.resume({ provider: "shcli", session_id: "", model: "m" }, {
          ...request(dir),
          cause: "steer",
        }),
      /never reported its session id/,
    );
  });
});

Deno.test("a CLI that is not installed fails to start with a message naming how to point at it", async () => {
  await withTempDir(async (dir) => {
    const profile = { ...shProfile(""), binName: "no-such-agent-cli" };
    await assert.rejects(
      () => createCliProvider(profile).start(request(dir)),
      /the shcli CLI was not found \("no-such-agent-cli" is not on PATH\); install it, or set agent\.bin or \$PROMPT_RUNNER_SHCLI_BIN/,
    );
  });
});

Deno.test("maskedArgv() masks secret flags, secret name=value pairs and secret variables' values", () => {
  assert.equal(
    maskedArgv(
      "cli",
      ["--api-key", "sk-123456", "-c", "token=abc", "say sk-999999"],
      { OPENAI_API_KEY: "sk-999999" },
    ),
    "cli --api-key '***' -c 'token=***' 'say ***'",
  );
});

Deno.test("interrupt() also kills a tool the CLI started in a session of its own, out of its group's reach", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/tool.pid`;
    const notes: string[] = [];
    const provider = createCliProvider(shProfile(
      `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' & ` +
        `while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo '{"id":"s-5"}'; wait`,
    ));
    const session = await provider.start(request(dir, notes));
    const iterator = session.events[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.type, "run_started");
    const tool = Number(await Deno.readTextFile(pidFile));
    assert.ok(alive(tool));
    session.interrupt();
    while (!(await iterator.next()).done) { /* drain */ }
    await session.close();
    for (let i = 0; i < 50 && alive(tool); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(alive(tool), false);
    assert.ok(notes.some((n) => n.includes("left running")), notes.join("\n"));
  });
});

Deno.test("a CLI that finished its turn but left a process holding its output open ends all the same: the leftover is killed", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/left.pid`;
    const provider = createCliProvider(shProfile(
      `echo '{"id":"s-6"}'; sleep 300 & echo $! > ${pidFile}; echo '{"end":"ok"}'; exit 0`,
    ));
    const session = await provider.start(request(dir));
    const events = await drain(session);
    await session.close();
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "run_completed",
    ]);
    const left = Number(await Deno.readTextFile(pidFile));
    for (let i = 0; i < 50 && alive(left); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(alive(left), false);
  });
});

Deno.test("a tool the CLI started in a session of its own, output redirected, still running when the turn ended normally, is killed at the session's end and named in the transcript", async () => {
  await withTempDir(async (dir) => {
    const pidFile = `${dir}/tool.pid`;
    const notes: string[] = [];
    const provider = createCliProvider(shProfile(
      `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' </dev/null >/dev/null 2>&1 & ` +
        `while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo '{"id":"s-8"}'; echo '{"end":"ok"}'`,
    ));
    const session = await provider.start(request(dir, notes));
    let tool = 0;
    try {
      const events = await drain(session);
      await session.close();
      assert.deepEqual(events.map((e) => e.type), [
        "run_started",
        "run_completed",
      ]);
      tool = Number(await Deno.readTextFile(pidFile));
      for (let i = 0; i < 250 && alive(tool); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(alive(tool), false, `tool ${tool} still runs`);
      assert.ok(
        notes.some((n) =>
          n.includes(
            `killed 1 process(es) the shcli CLI left running: ${tool} (sleep)`,
          )
        ),
        notes.join("\n"),
      );
    } finally {
      if (tool > 0 && alive(tool)) Deno.kill(tool, "SIGKILL");
    }
  });
});

Deno.test("a prompt too long for a command line is refused at start with its size, not an obscure spawn error", async () => {
  await withTempDir(async (dir) => {
    const profile: CliProfile = {
      ...shProfile(""),
      startArgs: (inv) => ["-c", "true", inv.text],
    };
    await assert.rejects(
      () =>
        createCliProvider(profile).start({
          ...request(dir),
          text: "x".repeat(200 * 1024),
        }),
      /the prompt is 200 KiB, too long for the shcli CLI's command line \(at most 127 KiB per argument\)/,
    );
  });
});
