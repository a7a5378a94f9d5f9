/**
 * Codex on its live lane, the default transport: the real `codex
 * app-server` (0.171.0) against the scripted Responses API server, driven by
 * the real `prompt_runner run` process. A prompt completes and verifies and
 * studio shows codex's own patch; a steer goes into the turn in flight with
 * no new process; an approval the policy denies is refused at once and
 * recorded; a dropped stream is resumed with `thread/resume`; a timeout
 * leaves no process behind. (`agent_codex_test.ts` keeps the `exec` lane.)
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable } from "../_helpers/agent_cli.ts";
import {
  codexFixture,
  type CodexFixtureOptions,
} from "../_helpers/agents/codex.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { makeAgentPacket } from "../_helpers/agents/packet.ts";
import type { ScriptedReply } from "../_helpers/model_server/server.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

const ignore = !agentAvailable("codex");

type Json = Record<string, unknown>;

async function withCodex(
  replies: ScriptedReply[],
  fn: (fixture: AgentFixture, dir: string) => Promise<void>,
  options: CodexFixtureOptions = {},
): Promise<void> {
  await withTempDir(async (dir) => {
    const fixture = await codexFixture(dir, replies, options);
    try {
      await fn(fixture, dir);
    } finally {
      await fixture.close();
    }
  });
}

function ofType(events: Json[], type: string): Json[] {
  return events.filter((e) => e.type === type);
}

function dataOf(event: Json | undefined): Json {
  return (event?.data ?? {}) as Json;
}

async function controlJson(
  args: string[],
  env: Record<string, string>,
): Promise<Json[]> {
  const result = await runCli(["control", ...args, "--json"], { env });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim().split("\n").filter(Boolean).map((l) =>
    JSON.parse(l)
  );
}

/** The transcript of the packet's first run's attempt `n` of prompt 01. */
async function attemptLog(stateRoot: string, n = 1): Promise<string> {
  const logs = join(stateRoot, "logs");
  const [runDir] = await Array.fromAsync(Deno.readDir(logs));
  return await Deno.readTextFile(
    join(logs, runDir!.name, `01-attempt-${n}.log`),
  );
}

function inputOf(turn: { body: unknown } | undefined): string {
  return JSON.stringify((turn?.body as Json | undefined)?.input ?? null);
}

Deno.test({
  name:
    "prompt_runner run with codex app-server: tools really edit, the contract verifies, studio draws codex's own patch, status counts tokens and tools",
  ignore,
  async fn(): Promise<void> {
    await withCodex([
      {
        thinking: "Notes first.",
        text: "Creating NOTES.md.",
        tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
        usage: { input_tokens: 300, output_tokens: 40 },
      },
      {
        tools: [{ kind: "edit", path: "NOTES.md", old: "draft", new: "final" }],
        usage: { input_tokens: 400, output_tokens: 30 },
      },
      {
        tools: [{ kind: "shell", command: "cp NOTES.md COPY.md" }],
        usage: { input_tokens: 500, output_tokens: 20 },
      },
      { text: "Done.", usage: { input_tokens: 600, output_tokens: 10 } },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: {
          files_exist: ["NOTES.md", "COPY.md"],
          contains: [{ path: "NOTES.md", text: "final" }],
        },
      });
      const result = await runCli(
        ["run", packet.dir, "--log-mode", "studio", "--diff", "full"],
        { env: fixture.env },
      );
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.equal(
        await Deno.readTextFile(join(packet.workspace, "COPY.md")),
        "final\n",
      );
      // The edit's patch is codex's own: the line it removed and the one it
      // added, not the file's current state.
      assert.match(result.stdout, /^\s*- draft$/m, result.stdout);
      assert.match(result.stdout, /^\s*\+ final$/m);
      assert.doesNotMatch(result.stdout, /current state of/);
      const [status] = await controlJson(["status", packet.dir], fixture.env);
      assert.equal(status!.status, "completed");
      assert.equal(status!.provider, "codex");
      assert.equal(status!.input_tokens, 1800);
      assert.equal(status!.output_tokens, 100);
      assert.equal(status!.tool_count, 3);
      const events = await controlJson(["events", packet.dir], fixture.env);
      assert.equal(
        dataOf(ofType(events, "verification_finished")[0]).passed,
        true,
      );
      const started = dataOf(ofType(events, "run_started")[0]);
      assert.equal(started.provider, "codex");
      assert.match(String(started.provider_session_id), /^[0-9a-f-]{36}$/);
      const edit = ofType(events, "tool_call_completed").map(dataOf).find((
        e,
      ) => JSON.stringify(e.tool_input).includes("+final"));
      assert.ok(edit, "the edit's completion carries its patch");
      assert.equal(edit.tool_name, "file_change");
      const log = await attemptLog(packet.stateRoot);
      assert.match(log, /codex app-server -c /);
      assert.match(log, /lane send_input/);
    });
  },
});

Deno.test({
  name:
    "a steer while codex waits on the model goes into the turn in flight with turn/steer: same process, same thread, acknowledged at its echo, and codex acts on it",
  ignore,
  async fn(): Promise<void> {
    const steerText = "Write the word steered into NOTES.md";
    const held = Promise.withResolvers<void>();
    await withCodex([
      {
        text: "Starting the notes.",
        tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
      },
      { text: "Still thinking.", until: held.promise },
      {
        text: "Following the steer.",
        tools: [{
          kind: "edit",
          path: "NOTES.md",
          old: "draft",
          new: "steered",
        }],
      },
      { text: "Done." },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { contains: [{ path: "NOTES.md", text: "steered" }] },
      });
      const server = fixture.server!;
      const run = startRun(packet.dir, [], { env: fixture.env });
      try {
        await run.until((e) => e.type === "tool_call_completed");
        await waitFor(
          "codex to wait on the held reply",
          () => Promise.resolve(server.turns().length >= 2),
        );
        const steer = await runCli(
          ["control", "steer", packet.dir, steerText],
          { env: fixture.env },
        );
        assert.equal(steer.code, 0, steer.stderr);
        // Released once codex took the turn/steer: the reply in flight then
        // ends, and codex echoes the steer.
        await waitFor(
          "the steer to reach codex",
          async () =>
            /turn\/steer into turn /.test(
              await attemptLog(packet.stateRoot).catch(() => ""),
            ),
        );
      } finally {
        held.resolve();
      }
      const { code, events, stderr } = await run.finish();
      assert.equal(code, 0, stderr);
      // One process and one thread for the whole attempt.
      const started = ofType(events, "run_started").map(dataOf);
      assert.equal(started.length, 1, "no new session");
      const pid = Number(started[0]!.pid);
      const state = JSON.parse(
        await Deno.readTextFile(join(packet.stateRoot, "state.json")),
      );
      const attempts = state.prompts["01"].attempts;
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0].agent.pid, pid);
      const log = await attemptLog(packet.stateRoot);
      assert.equal(log.match(/\$ \S*codex app-server/g)?.length, 1, log);
      assert.match(log, /turn\/steer into turn /);
      assert.doesNotMatch(log, /SIGINT|thread\/resume/);
      // Delivered on the live lane, at codex's echo.
      const [record] = await readJsonl(
        join(packet.stateRoot, "interventions", "01.jsonl"),
      );
      assert.equal(record?.delivery, "send_input");
      assert.equal(record?.mechanism, "turn_steer");
      assert.equal(record?.text, steerText);
      const control = await readJsonl(
        join(packet.stateRoot, "control", "log.jsonl"),
      );
      assert.deepEqual(
        control.filter((e) => e.command === "steer").map((e) => e.outcome),
        ["accepted", "applied"],
      );
      // The model's next request carried the steer after the earlier turns;
      // the held reply was dropped, and the steered step did the edit.
      const turns = server.turns();
      const next = turns.slice(2).find((t) => inputOf(t).includes(steerText));
      assert.ok(next, "the model never saw the steer");
      assert.ok(inputOf(next).includes("Starting the notes."));
      assert.ok(
        inputOf(next).indexOf("Starting the notes.") <
          inputOf(next).indexOf(steerText),
      );
      assert.equal(
        await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
        "steered\n",
      );
      assert.ok(
        ofType(events, "message_received").some((e) =>
          dataOf(e).content === "Following the steer."
        ),
      );
      assert.equal(ofType(events, "run_completed").length, 1);
      assert.equal(ofType(events, "prompt_completed").length, 1);
    });
  },
});

Deno.test({
  name:
    "an approval codex asks under approval_policy on-request is refused at once: the run ends, the call and the prompt fail as approval_denied",
  ignore,
  async fn(): Promise<void> {
    // Measured: under a read-only sandbox and on-request, apply_patch asks
    // item/fileChange/requestApproval (a command just fails in the sandbox).
    await withCodex([
      { tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }] },
      { text: "I could not write the notes." },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { files_exist: ["NOTES.md"] },
        recovery: { retry: { max_attempts: 3 }, repair: { enabled: false } },
      });
      const { code, events } = await startRun(packet.dir, [], {
        env: fixture.env,
      }).finish();
      assert.equal(code, 1);
      await assert.rejects(
        Deno.stat(join(packet.workspace, "NOTES.md")),
        Deno.errors.NotFound,
      );
      const refused = ofType(events, "tool_call_failed").map(dataOf);
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.tool_name, "file_change");
      assert.match(String(refused[0]!.tool_output), /^approval_denied: /);
      assert.match(String(refused[0]!.tool_output), /"on-request"/);
      const error = dataOf(ofType(events, "error_occurred")[0]);
      assert.equal(error.error_code, "approval_denied");
      assert.equal(ofType(events, "run_completed").length, 0);
      // codex carried on after the refusal; the outcome is still refused,
      // and never retried.
      assert.equal(fixture.server!.turns().length, 2);
      assert.equal(ofType(events, "prompt_started").length, 1);
      const failed = dataOf(ofType(events, "prompt_failed")[0]);
      assert.match(String(failed.reason), /approval_denied/);
      const log = await attemptLog(packet.stateRoot);
      assert.match(log, /refused item\/fileChange\/requestApproval/);
    }, { agent: { sandbox: "read-only", approval_policy: "on-request" } });
  },
});

Deno.test({
  name:
    "a dropped stream is resumed with thread/resume in a new codex process on the same thread, which keeps the conversation",
  ignore,
  async fn(): Promise<void> {
    await withCodex([
      {
        text: "Creating the notes.",
        tools: [{ kind: "write", path: "NOTES.md", content: "one\n" }],
        usage: { input_tokens: 100, output_tokens: 10 },
      },
      { drop: true },
      {
        tools: [{ kind: "edit", path: "NOTES.md", old: "one", new: "two" }],
        usage: { input_tokens: 200, output_tokens: 20 },
      },
      { text: "Done.", usage: { input_tokens: 300, output_tokens: 30 } },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { contains: [{ path: "NOTES.md", text: "two" }] },
        recovery: { resume_attempts: 1, retry: { max_attempts: 1 } },
      });
      const { code, events, stderr } = await startRun(packet.dir, [], {
        env: fixture.env,
      }).finish();
      assert.equal(code, 0, stderr);
      const resumed = ofType(events, "session_resumed").map(dataOf);
      assert.equal(resumed.length, 1);
      assert.equal(resumed[0]!.failure_class, "transport_disconnect");
      const started = ofType(events, "run_started").map(dataOf);
      assert.equal(started.length, 2);
      assert.equal(
        started[0]!.provider_session_id,
        started[1]!.provider_session_id,
      );
      assert.notEqual(started[0]!.pid, started[1]!.pid, "a new process");
      const after = inputOf(fixture.server!.turns()[2]);
      assert.ok(after.includes("Creating the notes."), "same conversation");
      assert.equal(ofType(events, "retry_scheduled").length, 0);
      // The resumed process counts only its own tokens: the attempt's total
      // is each request's once.
      const [status] = await controlJson(["status", packet.dir], fixture.env);
      assert.equal(status!.input_tokens, 600);
      assert.equal(status!.output_tokens, 60);
      const log = await attemptLog(packet.stateRoot);
      assert.equal(log.match(/\$ \S*codex app-server/g)?.length, 2, log);
    });
  },
});

Deno.test({
  name:
    "with steer_lane: resume a steer interrupts codex's turn (turn/interrupt) and resumes the thread with thread/resume",
  ignore,
  async fn(): Promise<void> {
    const steerText = "Write the word steered into NOTES.md";
    await withCodex([
      {
        text: "Starting the notes.",
        tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
      },
      { hang: true },
      {
        text: "Following the steer.",
        tools: [{
          kind: "edit",
          path: "NOTES.md",
          old: "draft",
          new: "steered",
        }],
      },
      { text: "Done." },
    ], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { contains: [{ path: "NOTES.md", text: "steered" }] },
      });
      const server = fixture.server!;
      const run = startRun(packet.dir, [], { env: fixture.env });
      await run.until((e) => e.type === "tool_call_completed");
      await waitFor(
        "codex to wait on the hung reply",
        () => Promise.resolve(server.turns().length >= 2),
      );
      const steer = await runCli(
        ["control", "steer", packet.dir, steerText],
        { env: fixture.env },
      );
      assert.equal(steer.code, 0, steer.stderr);
      const { code, events, stderr } = await run.finish();
      assert.equal(code, 0, stderr);
      const sessions = ofType(events, "run_started").map((e) =>
        dataOf(e).provider_session_id
      );
      assert.equal(sessions.length, 2);
      assert.equal(sessions[0], sessions[1]);
      const [record] = await readJsonl(
        join(packet.stateRoot, "interventions", "01.jsonl"),
      );
      assert.equal(record?.delivery, "interrupt_and_resume");
      assert.equal(record?.mechanism, "resume");
      const resumedTurn = server.turns().slice(2).find((t) =>
        inputOf(t).includes(steerText)
      );
      assert.ok(resumedTurn, "the resumed thread never carried the steer");
      assert.ok(inputOf(resumedTurn).includes("Starting the notes."));
      assert.equal(
        await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
        "steered\n",
      );
      const log = await attemptLog(packet.stateRoot);
      assert.match(log, /interrupting the codex turn/);
      assert.match(log, /lane interrupt_and_resume/);
    }, { agent: { steer_lane: "resume" } });
  },
});

Deno.test({
  name:
    "a hung model: codex app-server's turn is interrupted at timeout_ms and no process of the run is left",
  ignore,
  async fn(): Promise<void> {
    await withCodex([{ hang: true }], async (fixture, dir) => {
      const packet = await makeAgentPacket(dir, fixture, {
        verify: { files_exist: ["NOTES.md"] },
        timeout_ms: 3_000,
        recovery: {
          retry: { max_attempts: 0 },
          resume_attempts: 0,
          repair: { enabled: false },
        },
      });
      const run = startRun(packet.dir, [], { env: fixture.env });
      const watch = watchDescendants(run.child.pid);
      const { code, events } = await run.finish();
      const seen = await watch.stop();
      // A killed group's members are reaped within moments.
      for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(code, 1);
      assert.ok(fixture.server!.turns().length >= 1, "codex asked the server");
      const agentPid = Number(dataOf(ofType(events, "run_started")[0]).pid);
      assert.ok(seen.has(agentPid), `codex (${agentPid}) was never watched`);
      assert.ok(seen.size >= 2, "the wrapper and the native codex");
      assert.deepEqual(watch.alive(), [], "processes left behind");
      assert.equal(ofType(events, "prompt_started").length, 1);
      const failed = dataOf(ofType(events, "prompt_failed")[0]);
      assert.match(String(failed.reason), /transport_timeout/);
      const log = await attemptLog(packet.stateRoot);
      assert.match(log, /interrupting the codex turn/);
    });
  },
});
