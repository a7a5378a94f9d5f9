/**
 * The ACP live lane end to end, through a real `prompt_runner run` process,
 * with two real agents against the scripted model servers:
 *
 * - `gemini --acp` (0.61.0), gemini's default transport, against the
 *   Gemini dialect;
 * - `provider: acp` with `agent.bin` = `claude-code-acp` (0.16.2), driving
 *   the real `claude` (2.1.332) against the Anthropic dialect.
 *
 * For each: a prompt completes, verifies and renders its edit as the tool's
 * own patch; a steer sent while the server holds a reply is delivered on
 * the live lane (same process, same session, `acp_prompt`, `applied`) and
 * the agent's next action follows it; a permission the policy denies is
 * refused at once and recorded as `approval_denied`; a timeout stops the
 * agent with nothing left behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { agentAvailable } from "../_helpers/agent_cli.ts";
import { claudeAcpFixture } from "../_helpers/agents/claude_acp.ts";
import type { AgentFixture } from "../_helpers/agents/fixture.ts";
import { geminiFixture } from "../_helpers/agents/gemini.ts";
import {
  type AgentPacket,
  makeAgentPacket,
} from "../_helpers/agents/packet.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import type { ScriptedReply } from "../_helpers/model_server/server.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";

type Json = Record<string, unknown>;

/** One agent on the ACP lane, as these tests drive it. */
interface AcpAgent {
  /** The test names' prefix. */
  name: string;
  /** Whether its CLIs are missing (the tests are skipped, loudly). */
  ignore: boolean;
  /** Its fixture. */
  fixture: (dir: string, replies: ScriptedReply[]) => Promise<AgentFixture>;
  /** The manifest's `provider`. */
  provider: string;
  /** The `agent:` keys under which the agent's writes are refused. */
  refusing: Json;
  /** The tool calls the tool script makes (claude reads before it edits). */
  tools: string[];
  /** The text of every user turn of a model request. */
  userText(body: unknown): string;
  /** What `run_started` names as the agent's version. */
  version: RegExp;
}

function geminiText(body: unknown): string {
  const contents = (body as { contents?: { role?: string; parts?: Json[] }[] })
    .contents ?? [];
  return contents.filter((c) => c.role === "user")
    .flatMap((c) => c.parts ?? []).map((p) => String(p.text ?? ""))
    .join("\n");
}

function anthropicText(body: unknown): string {
  const messages =
    (body as { messages?: { role?: string; content?: unknown }[] })
      .messages ?? [];
  return messages.filter((m) => m.role === "user").flatMap((m) =>
    typeof m.content === "string"
      ? [m.content]
      : Array.isArray(m.content)
      ? m.content.map((c) => String((c as Json).text ?? ""))
      : []
  ).join("\n");
}

const AGENTS: AcpAgent[] = [
  {
    name: "gemini --acp",
    ignore: !agentAvailable("gemini"),
    fixture: geminiFixture,
    provider: "gemini",
    refusing: { approval_mode: "default" },
    tools: ["edit", "edit", "execute"],
    userText: geminiText,
    version: /0\.61\.0/,
  },
  {
    name: "acp (claude-code-acp)",
    ignore: !agentAvailable("claude-code-acp") || !agentAvailable("claude"),
    fixture: claudeAcpFixture,
    provider: "acp",
    refusing: { permissions: { read: "allow" } },
    tools: ["edit", "read", "edit", "execute"],
    userText: anthropicText,
    version: /claude-code-acp|0\.16\.2/,
  },
];

function ofType(events: Json[], type: string): Json[] {
  return events.filter((e) => e.type === type);
}

function dataOf(event: Json | undefined): Json {
  return (event?.data ?? {}) as Json;
}

async function promptState(packet: AgentPacket): Promise<Json> {
  const state = JSON.parse(
    await Deno.readTextFile(join(packet.stateRoot, "state.json")),
  );
  return state.prompts["01"] as Json;
}

async function withAgent(
  agent: AcpAgent,
  replies: ScriptedReply[],
  body: (fixture: AgentFixture, dir: string) => Promise<void>,
  over: Json = {},
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "acp_e2e_" });
  const made = await agent.fixture(dir, replies);
  const fixture = { ...made, agent: { ...made.agent, ...over } };
  try {
    await body(fixture, dir);
  } finally {
    await fixture.close();
    await Deno.remove(dir, { recursive: true });
  }
}

for (const agent of AGENTS) {
  Deno.test({
    name:
      `${agent.name}: prompt_runner run completes and verifies; the edits' ACP diffs render in studio as the tools' own patches; status counts the tools`,
    ignore: agent.ignore,
    async fn(): Promise<void> {
      await withAgent(agent, [
        {
          thinking: "Notes first.",
          text: "Creating NOTES.md.",
          tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
          usage: { input_tokens: 300, output_tokens: 40 },
        },
        {
          text: "Finishing them.",
          tools: [{
            kind: "edit",
            path: "NOTES.md",
            old: "draft",
            new: "final",
          }],
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
            contains: [{ path: "COPY.md", text: "final" }],
          },
          body: "Create NOTES.md, finish it and copy it to COPY.md.",
          recovery: { repair: { enabled: false } },
          timeout_ms: 60_000,
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
        // The edit's own patch (from its ACP diff), never the file's state.
        assert.match(result.stdout, /\n +- draft\n +\+ final\n/);
        assert.doesNotMatch(result.stdout, /current state of/);
        const status = await runCli(
          ["control", "status", packet.dir, "--json"],
          { env: fixture.env },
        );
        assert.equal(status.code, 0, status.stderr);
        const snapshot = JSON.parse(status.stdout);
        assert.equal(snapshot.status, "completed");
        assert.equal(snapshot.provider, agent.provider);
        assert.equal(snapshot.tool_count, agent.tools.length);
        const listed = await runCli(
          ["control", "events", packet.dir, "--json"],
          { env: fixture.env },
        );
        assert.equal(listed.code, 0, listed.stderr);
        const events: Json[] = listed.stdout.trim().split("\n").map((l) =>
          JSON.parse(l)
        );
        assert.deepEqual(
          ofType(events, "tool_call_started").map((e) => dataOf(e).tool_name),
          agent.tools,
        );
        const started = ofType(events, "run_started");
        assert.equal(started.length, 1);
        assert.match(
          String(dataOf(started[0]).provider_session_id),
          /^[0-9a-f-]{36}$/,
        );
        // The agent names itself (claude-code-acp's --version says nothing).
        assert.match(String(dataOf(started[0]).cli_version), agent.version);
        const edits = ofType(events, "tool_call_completed").filter((e) =>
          Array.isArray((dataOf(e).tool_input as Json | undefined)?.changes)
        );
        assert.ok(edits.length >= 2, "each edit carries its diff");
        assert.equal(
          dataOf(ofType(events, "verification_finished")[0]).passed,
          true,
        );
      });
    },
  });

  Deno.test({
    name:
      `${agent.name}: a steer while the server holds a reply is delivered on the live lane: same process and session, acp_prompt, applied; the next model request carries it and the agent's next edit follows it`,
    ignore: agent.ignore,
    async fn(): Promise<void> {
      const steerText = "Write the word steered into NOTES.md";
      const held = Promise.withResolvers<void>();
      try {
        await withAgent(agent, [
          {
            text: "Starting the notes.",
            tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
          },
          { text: "A long think.", until: held.promise },
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
            body: "Create NOTES.md with a draft of the notes.",
            recovery: { repair: { enabled: false } },
            timeout_ms: 90_000,
          });
          const run = startRun(packet.dir, [], { env: fixture.env });
          const server = fixture.server!;
          await waitFor(
            "the held reply",
            () => Promise.resolve(server.turns().length >= 2),
            60_000,
          );
          const steer = await runCli(
            ["control", "steer", packet.dir, steerText],
            { env: fixture.env },
          );
          assert.equal(steer.code, 0, steer.stderr);
          const done = await run.finish();
          assert.equal(done.code, 0, done.stderr);
          // One agent process and one session for the whole attempt.
          const started = ofType(done.events, "run_started");
          assert.equal(started.length, 1, "no restart, no resume");
          assert.equal(
            new Set(started.map((e) => dataOf(e).pid)).size,
            1,
          );
          const prompt = await promptState(packet);
          assert.equal(prompt.status, "completed");
          const attempts = prompt.attempts as Json[];
          assert.equal(attempts.length, 1);
          const transcript = await Deno.readTextFile(
            join(packet.stateRoot, String(attempts[0]!.transcript)),
          );
          assert.equal(
            transcript.split("\n").filter((l) =>
              l.includes("[prompt_runner] $ ")
            ).length,
            1,
            "the agent was launched once",
          );
          assert.match(transcript, /session\/cancel, then a session\/prompt/);
          const [record] = await readJsonl(
            join(packet.stateRoot, "interventions", "01.jsonl"),
          );
          assert.equal(record?.text, steerText);
          assert.equal(record?.delivery, "send_input");
          assert.equal(record?.mechanism, "acp_prompt");
          const log = await readJsonl(
            join(packet.stateRoot, "control", "log.jsonl"),
          );
          const steers = log.filter((e) => e.command === "steer");
          assert.ok(
            steers.some((e) => e.outcome === "applied"),
            JSON.stringify(steers),
          );
          assert.ok(!steers.some((e) => e.outcome === "rejected"));
          // The request after the held one carries the steer and, restated,
          // the task (gemini dropped the cancelled prompt from its history).
          const turns = server.turns();
          assert.equal(turns.length, 4);
          const steered = agent.userText(turns[2]!.body);
          assert.ok(steered.includes(steerText), steered);
          assert.ok(
            steered.includes("<task>\nCreate NOTES.md with a draft"),
            steered,
          );
          assert.equal(
            await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
            "steered\n",
          );
          assert.ok(
            ofType(done.events, "message_received").some((e) =>
              dataOf(e).content === "Following the steer."
            ),
          );
          assert.equal(ofType(done.events, "run_failed").length, 0);
        });
      } finally {
        held.resolve();
      }
    },
  });

  Deno.test({
    name:
      `${agent.name}: a write the packet's policy refuses is refused at once and the prompt fails as approval_denied, with nothing written and no hang`,
    ignore: agent.ignore,
    async fn(): Promise<void> {
      await withAgent(agent, [
        {
          text: "Writing the notes.",
          tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
        },
        { text: "I could not write them." },
      ], async (fixture, dir) => {
        const packet = await makeAgentPacket(dir, fixture, {
          verify: { files_exist: ["NOTES.md"] },
          recovery: { repair: { enabled: false }, retry: { max_attempts: 2 } },
          timeout_ms: 60_000,
        });
        const done = await startRun(packet.dir, [], { env: fixture.env })
          .finish();
        assert.notEqual(done.code, 0);
        const denied = ofType(done.events, "tool_call_failed").filter((e) =>
          String(dataOf(e).tool_output).startsWith("approval_denied: ")
        );
        assert.equal(denied.length, 1);
        assert.equal(dataOf(denied[0]).tool_name, "edit");
        const failed = ofType(done.events, "run_failed");
        assert.equal(failed.length, 1);
        assert.equal(dataOf(failed[0]).error_code, "approval_denied");
        // approval_denied is never retried.
        assert.equal(ofType(done.events, "retry_scheduled").length, 0);
        const prompt = await promptState(packet);
        assert.equal(prompt.status, "failed");
        assert.equal(
          (prompt.attempts as Json[])[0]!.failure_class,
          "approval_denied",
        );
        assert.ok(
          !await Deno.stat(join(packet.workspace, "NOTES.md")).then(
            () => true,
            () => false,
          ),
        );
      }, agent.refusing);
    },
  });

  Deno.test({
    name:
      `${agent.name}: a hung model server: the agent is stopped at timeout_ms, the prompt fails as transport_timeout, and no process it started is left`,
    ignore: agent.ignore,
    async fn(): Promise<void> {
      await withAgent(agent, [{ hang: true }], async (fixture, dir) => {
        const packet = await makeAgentPacket(dir, fixture, {
          verify: { files_exist: ["NOTES.md"] },
          recovery: {
            repair: { enabled: false },
            retry: { max_attempts: 0 },
            resume_attempts: 0,
          },
          timeout_ms: 10_000,
        });
        const run = startRun(packet.dir, [], { env: fixture.env });
        const watch = watchDescendants(run.child.pid);
        const done = await run.finish();
        const seen = await watch.stop();
        for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.notEqual(done.code, 0);
        assert.equal(fixture.server!.turns().length, 1);
        const agentPid = Number(
          dataOf(ofType(done.events, "run_started")[0]).pid,
        );
        assert.ok(seen.has(agentPid), `pid ${agentPid} among ${[...seen]}`);
        const prompt = await promptState(packet);
        assert.equal(prompt.status, "failed");
        assert.equal(
          (prompt.attempts as Json[])[0]!.failure_class,
          "transport_timeout",
        );
        assert.deepEqual(watch.alive(), []);
      });
    },
  });
}
