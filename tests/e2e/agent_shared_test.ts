/**
 * One e2e suite, every provider: the control plane of a run behaves the
 * same whichever agent runs it (the simulated provider or a real CLI
 * against the scripted model server) — the same event types, the same
 * snapshot fields, the same steer records.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  PROVIDER_EVENT_TYPES,
  RUNNER_EVENT_TYPES,
} from "../../lib/shared/events.ts";
import { agentAvailable } from "../_helpers/agent_cli.ts";
import { SUITE_PROVIDERS } from "../_helpers/agents/all.ts";
import { makeAgentPacket } from "../_helpers/agents/packet.ts";
import { startRun } from "../_helpers/live_run.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";
import { SNAPSHOT_FIELDS } from "../../lib/shared/snapshot_schema.ts";

const KNOWN_TYPES = new Set<string>([
  ...PROVIDER_EVENT_TYPES,
  ...RUNNER_EVENT_TYPES,
]);

/** The keys of an intervention record. */
const INTERVENTION_KEYS = [
  "at",
  "prompt",
  "attempt",
  "author",
  "text",
  "lane",
  "delivery",
  "mechanism",
  "acknowledged_at",
  "run_id",
  "request_id",
];

async function statusJson(
  packet: string,
  env: Record<string, string>,
): Promise<Record<string, unknown>> {
  const result = await runCli(["control", "status", packet, "--json"], {
    env,
  });
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

for (const provider of SUITE_PROVIDERS) {
  const ignore = provider.cli !== null && !agentAvailable(provider.cli);

  Deno.test({
    name:
      `[${provider.name}] a prompt runs its tools, verifies, and the control plane reports it like every provider's`,
    ignore,
    async fn(): Promise<void> {
      await withTempDir(async (dir) => {
        const fixture = await provider.fixture(dir, [
          {
            thinking: "I will create the notes first.",
            text: "Creating NOTES.md.",
            tools: [{ kind: "write", path: "NOTES.md", content: "hello\n" }],
            usage: { input_tokens: 300, output_tokens: 40 },
          },
          {
            text: "Editing it.",
            tools: [{
              kind: "edit",
              path: "NOTES.md",
              old: "hello",
              new: "hi",
            }],
            usage: { input_tokens: 400, output_tokens: 30 },
          },
          { text: "Done.", usage: { input_tokens: 500, output_tokens: 10 } },
        ]);
        try {
          const packet = await makeAgentPacket(dir, fixture, {
            verify: {
              files_exist: ["NOTES.md"],
              contains: [{ path: "NOTES.md", text: "hi" }],
            },
          });
          const run = startRun(packet.dir, [], { env: fixture.env });
          const { code, events, stderr } = await run.finish();
          assert.equal(code, 0, stderr);
          const types = events.map((e) => String(e.type));
          for (const type of types) {
            assert.ok(KNOWN_TYPES.has(type), `unknown event type ${type}`);
          }
          for (
            const type of [
              "run_started",
              "tool_call_started",
              "tool_call_completed",
              "token_usage_updated",
              "run_completed",
              "verification_finished",
              "prompt_completed",
              "run_finished",
            ]
          ) {
            assert.ok(types.includes(type), `no ${type} in ${types}`);
          }
          const started = events.find((e) => e.type === "run_started")!;
          const data = started.data as Record<string, unknown>;
          assert.equal(typeof data.provider_session_id, "string");
          assert.notEqual(data.provider_session_id, "");
          assert.equal(
            await Deno.readTextFile(join(packet.workspace, "NOTES.md")),
            "hi\n",
          );
          const snapshot = await statusJson(packet.dir, fixture.env);
          for (const key of SNAPSHOT_FIELDS) {
            assert.ok(key in snapshot, `snapshot has no ${key}`);
          }
          assert.equal(snapshot.status, "completed");
          assert.equal(snapshot.provider, provider.name);
          assert.ok(Number(snapshot.tool_count) >= 2, `${snapshot.tool_count}`);
          assert.ok(Number(snapshot.input_tokens) > 0);
          assert.ok(Number(snapshot.output_tokens) > 0);
        } finally {
          await fixture.close();
        }
      });
    },
  });

  Deno.test({
    name:
      `[${provider.name}] a steer sent mid-turn from another process reaches the same session and is recorded like every provider's`,
    ignore,
    async fn(): Promise<void> {
      await withTempDir(async (dir) => {
        const fixture = await provider.fixture(dir, [
          {
            text: "Starting the notes.",
            tools: [{ kind: "write", path: "NOTES.md", content: "draft\n" }],
          },
          {
            text: "Thinking about the rest for a long while.",
            delay_ms: 30_000,
          },
          {
            text: "Following the steer.",
            tools: [{
              kind: "edit",
              path: "NOTES.md",
              old: "draft",
              new: "final",
            }],
          },
          { text: "Done." },
        ]);
        try {
          const packet = await makeAgentPacket(dir, fixture, {
            verify: { files_exist: ["NOTES.md"] },
          });
          const run = startRun(packet.dir, [], { env: fixture.env });
          await run.until((e) => e.type === "tool_call_completed");
          const steer = await runCli([
            "control",
            "steer",
            packet.dir,
            "Use the word final in the notes",
          ], { env: fixture.env });
          assert.equal(steer.code, 0, steer.stdout + steer.stderr);
          const { code, events, stderr } = await run.finish();
          assert.equal(code, 0, stderr);
          const steered = events.find((e) => e.type === "prompt_steered");
          assert.ok(steered, "no prompt_steered event");
          const lane = provider.sendInput
            ? "send_input"
            : "interrupt_and_resume";
          const sessions = events.filter((e) => e.type === "run_started").map(
            (e) => (e.data as Record<string, unknown>).provider_session_id,
          );
          assert.ok(sessions.length >= 1);
          assert.equal(new Set(sessions).size, 1, `sessions ${sessions}`);
          const records = (await Deno.readTextFile(
            join(packet.stateRoot, "interventions", "01.jsonl"),
          )).trim().split("\n").map((line) => JSON.parse(line));
          assert.equal(records.length, 1);
          assert.deepEqual(
            Object.keys(records[0]).sort(),
            [...INTERVENTION_KEYS].sort(),
          );
          assert.equal(records[0].delivery, lane);
          assert.equal(records[0].mechanism, provider.mechanism);
          const log = (await Deno.readTextFile(
            join(packet.stateRoot, "control", "log.jsonl"),
          )).trim().split("\n").map((line) => JSON.parse(line));
          assert.deepEqual(
            log.filter((e) => e.command === "steer").map((e) => e.outcome),
            ["accepted", "applied"],
          );
          assert.equal(records[0].lane, provider.name);
          assert.equal(records[0].text, "Use the word final in the notes");
          if (fixture.server !== null) {
            const turns = fixture.server.turns();
            const last = JSON.stringify(turns[turns.length - 1]?.body);
            const afterSteer = turns.find((t) =>
              JSON.stringify(t.body).includes("Use the word final in the notes")
            );
            assert.ok(afterSteer, `the server never saw the steer: ${last}`);
            assert.ok(
              JSON.stringify(afterSteer.body).includes("Starting the notes."),
              "the steered request lost the earlier turns",
            );
          }
        } finally {
          await fixture.close();
        }
      });
    },
  });
}
