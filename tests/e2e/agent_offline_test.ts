/**
 * Each real agent CLI with no model server to reach (no network here, a
 * dummy key, HOME in a temp dir): the run ends in a classified failure or
 * at its timeout, never hangs past it, and leaves no process behind.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  agentAvailable,
  agentBin,
  type AgentName,
} from "../_helpers/agent_cli.ts";
import { makeAgentPacket } from "../_helpers/agents/packet.ts";
import { startRun } from "../_helpers/live_run.ts";
import { watchDescendants } from "../_helpers/fake_cli/proc_tree.ts";
import { withTempDir } from "../_helpers/temp_dir.ts";

/** Each CLI's unattended options and its dummy credentials. */
const OFFLINE: Record<AgentName, {
  provider?: string;
  agent: Record<string, unknown>;
  env: Record<string, string>;
  classes: string[];
}> = {
  // The ACP adapter, driving the claude CLI.
  "claude-code-acp": {
    provider: "acp",
    agent: { env: { IS_SANDBOX: "" } },
    env: { ANTHROPIC_API_KEY: "sk-ant-dummy-offline" },
    classes: ["transport_timeout", "transport_disconnect"],
  },
  claude: {
    agent: { permission_mode: "acceptEdits" },
    env: { ANTHROPIC_API_KEY: "sk-ant-dummy-offline" },
    classes: ["transport_timeout", "transport_disconnect"],
  },
  codex: {
    agent: { sandbox: "workspace-write", approval_policy: "never" },
    env: { CODEX_API_KEY: "sk-dummy-offline" },
    classes: ["transport_timeout"],
  },
  gemini: {
    agent: { approval_mode: "yolo" },
    env: { GEMINI_API_KEY: "dummy-offline" },
    classes: ["transport_timeout", "transport_disconnect"],
  },
  amp: {
    agent: {},
    env: { AMP_API_KEY: "dummy-offline" },
    classes: ["transport_disconnect"],
  },
};

/** Base URLs a developer's shell may carry: the CLIs must not reach anything. */
const BASE_URL_VARIABLES = [
  "ANTHROPIC_BASE_URL",
  "OPENAI_BASE_URL",
  "GOOGLE_GEMINI_BASE_URL",
  "AMP_URL",
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "CODEX_API_KEY",
  "GEMINI_API_KEY",
  "AMP_API_KEY",
];

for (const name of Object.keys(OFFLINE) as AgentName[]) {
  Deno.test({
    name:
      `[${name}] with no model server to reach, a run ends classified or at its timeout, and leaves no process behind`,
    ignore: !agentAvailable(name),
    async fn(): Promise<void> {
      await withTempDir(async (dir) => {
        const home = join(dir, "home");
        await Deno.mkdir(home);
        const offline = OFFLINE[name];
        const packet = await makeAgentPacket(dir, {
          provider: offline.provider ?? name,
          agent: { bin: agentBin(name), ...offline.agent },
          model: null,
          env: {},
          server: null,
          close: () => Promise.resolve(),
        }, {
          verify: { files_exist: ["NOTES.md"] },
          recovery: {
            resume_attempts: 0,
            retry: { max_attempts: 1 },
            repair: { enabled: false },
          },
          timeout_ms: 8000,
        });
        const run = startRun(packet.dir, [], {
          env: { HOME: home, ...offline.env },
          unsetEnv: BASE_URL_VARIABLES.filter((v) => !(v in offline.env)),
        });
        const watch = watchDescendants(run.child.pid);
        const { code, events, stderr } = await run.finish();
        const seen = await watch.stop();
        // A killed group's members are reaped within moments.
        for (let i = 0; i < 40 && watch.alive().length > 0; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        assert.notEqual(code, 0, stderr);
        const state = JSON.parse(
          await Deno.readTextFile(join(packet.stateRoot, "state.json")),
        );
        const prompt = state.prompts["01"];
        assert.equal(prompt.status, "failed", JSON.stringify(prompt));
        assert.ok(
          offline.classes.includes(prompt.failure_class),
          `${name}: ${prompt.failure_class}: ${prompt.reason}`,
        );
        assert.equal(events.at(-1)?.type, "run_finished");
        assert.ok(seen.size > 0, "the CLI was never seen running");
        assert.deepEqual(watch.alive(), []);
      });
    },
  });
}
