/**
 * Every attention reason, produced by a real run in its own process (the
 * simulated agent), reaches everyone who should hear of it: the snapshot
 * (`control status --json` and its words), `status --json`, the
 * dashboard's runs page (its row flagged with the reason), a notify
 * command (the event on stdin) and a loopback webhook (the event as a JSON
 * POST). The real-CLI case (a permission Claude refuses) is in
 * `agent_claude_test.ts`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { rootKey, runId, startDashboard } from "../_helpers/dashboard.ts";
import { type LiveRun, startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import { webhookServer } from "../_helpers/webhook_server.ts";

/** How each reason is brought about. */
interface Case {
  reason: string;
  manifest?: string;
  prompt: string;
  /** Something to do to the live run (a steer) once it has started. */
  poke?: (dir: string) => Promise<void>;
}

const CASES: Case[] = [
  {
    reason: "failed",
    prompt: promptFile(`verify: {files_exist: [NEVER.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{messages: ["not doing it"]}]}`),
  },
  {
    reason: "verifier_fault",
    prompt: promptFile(`verify:
  commands: [{exec: /nonexistent/checker, args: []}]
simulate: {attempts: [{messages: ["done"]}]}`),
  },
  {
    reason: "approval_denied",
    prompt: promptFile(`simulate:
  attempts:
    - error: {kind: approval_denied, message: "Bash was refused"}`),
  },
  {
    reason: "budget_exhausted",
    manifest: "budget: {max_cost_usd: 0.02}",
    prompt: promptFile(`simulate:
  attempts:
    - delay_ms: 50
      repeat: 6
      messages: ["spending"]
      usage: {input_tokens: 10, output_tokens: 1, cost_usd: 0.01}`),
  },
  {
    reason: "steer_budget_exhausted",
    prompt: promptFile(`recovery: {max_steers: 0}
simulate:
  attempts:
    - delay_ms: 100
      repeat: 40
      messages: ["working"]`),
    poke: async (dir) => {
      const steered = await runCli(["control", "steer", dir, "hurry up"]);
      assert.equal(steered.code, 0, steered.stderr);
    },
  },
  {
    reason: "stalled",
    // Quiet for 4 s before each event: stalled from the idle tick 0.5 s in.
    prompt: promptFile(`progress_timeout_ms: 200
simulate:
  attempts:
    - delay_ms: 4000
      messages: ["slow"]`),
  },
];

/** A notify command rule that appends each event it gets to `file`. */
function recorder(file: string): string {
  return `  - {on: [attention], command: [sh, -c, 'cat >> "$0"; echo >> "$0"', ${
    JSON.stringify(file)
  }]}`;
}

function attentionIn(text: string, reason: string): boolean {
  return text.split("\n").filter((l) => l.trim() !== "").some((line) => {
    const event = JSON.parse(line);
    return event.type === "attention_needed" && event.data.reason === reason;
  });
}

async function stop(run: LiveRun): Promise<void> {
  try {
    run.child.kill("SIGINT");
  } catch {
    // It ended on its own.
  }
  await run.finish();
}

for (const c of CASES) {
  Deno.test(`attention ${c.reason}: a real run's reason reaches the snapshot, status, control status, the dashboard, a notify command and a webhook`, async () => {
    await using hook = webhookServer(() => 200);
    const out = await Deno.makeTempDir({ prefix: "attention-out-" });
    const file = join(out, "attention.jsonl");
    try {
      await using packet = await makePacket({
        manifest: [
          ...(c.manifest === undefined ? [] : [c.manifest]),
          "notify:",
          recorder(file),
          `  - {on: [attention], webhook: '${hook.origin}/hook'}`,
        ].join("\n"),
        prompts: { "01_a.prompt.md": c.prompt },
      });
      await using run = startRun(packet.dir);
      await run.until((e) => e.type === "run_started");
      await c.poke?.(packet.dir);
      // status --json: the rollup names the reason.
      const rollup = await waitFor(`status to show ${c.reason}`, async () => {
        const status = await runCli(["status", packet.dir, "--json"]);
        assert.equal(status.code, 0, status.stderr);
        const parsed = JSON.parse(status.stdout);
        return parsed.attention?.reason === c.reason ? parsed : null;
      });
      assert.equal(rollup.attention.prompt_id, "01");
      // control status: the snapshot, as JSON and in words.
      const snap = await runCli(["control", "status", packet.dir, "--json"]);
      assert.equal(JSON.parse(snap.stdout).attention?.reason, c.reason);
      const words = await runCli(["control", "status", packet.dir]);
      assert.match(
        words.stdout,
        new RegExp(`attention\\s+${c.reason.replaceAll("_", " ")} on 01`),
      );
      // The dashboard's runs page flags the run's row with the reason.
      {
        await using server = await startDashboard([packet.dir, "--port", "0"]);
        const login = await fetch(server.url, { redirect: "manual" });
        await login.body?.cancel();
        const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
        const page = await fetch(`${server.origin}/`, { headers: { cookie } });
        const html = await page.text();
        const key = `${rootKey(packet.stateRoot)}/${await runId(
          packet.stateRoot,
        )}`;
        const row = html.match(
          new RegExp(`<tr[^>]*data-run="${key}"[^>]*>`),
        )?.[0];
        assert.ok(row, `the run's row on the runs page:\n${html}`);
        assert.match(row, new RegExp(`data-attention="${c.reason}"`));
      }
      // The notify command and the webhook got the event.
      await waitFor("the notify command's copy", async () => {
        const text = await Deno.readTextFile(file).catch(() => "");
        return attentionIn(text, c.reason);
      });
      await waitFor("the webhook's copy", () =>
        Promise.resolve(
          hook.requests.some((r) =>
            r.method === "POST" && attentionIn(r.body, c.reason)
          ),
        ));
      await stop(run);
    } finally {
      await Deno.remove(out, { recursive: true });
    }
  });
}
