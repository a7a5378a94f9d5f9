/**
 * The Claude Code fixture for provider e2e tests: the real `claude` CLI,
 * pointed at the scripted Anthropic server with a dummy key and a HOME in
 * the test's directory, allowed to write, edit and run shell commands
 * unattended (`acceptEdits` plus `allowed_tools`, which works as root, where
 * `bypassPermissions` is refused).
 *
 * @module
 */

import { join } from "node:path";
import { agentBin } from "../agent_cli.ts";
import { startAnthropicServer } from "../model_server/anthropic.ts";
import type { ScriptedReply } from "../model_server/server.ts";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";

/** The tools a scripted Claude Code run may use without asking. */
export const CLAUDE_TOOLS = ["Read", "Edit", "Write", "Bash"];

/**
 * Environment for a Claude Code run against `url`: a HOME under `dir`, a
 * dummy key, no side traffic, and no retries of its own (a test scripts
 * each failure once; the runner's retry policy does the rest).
 */
export function claudeEnv(dir: string, url: string): Record<string, string> {
  return {
    HOME: join(dir, "claude_home"),
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "sk-ant-scripted-dummy",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    CLAUDE_CODE_MAX_RETRIES: "0",
  };
}

/**
 * The claude CLI the tests run: `$PROMPT_RUNNER_CLAUDE_BIN` (to try another
 * version), else the pinned one, else the one on `PATH`.
 */
export function claudeBin(): string | null {
  return Deno.env.get("PROMPT_RUNNER_CLAUDE_BIN") || agentBin("claude");
}

/** Starts the scripted server and describes the real `claude` CLI. */
export const claudeFixture: FixtureFactory = async (
  dir: string,
  replies: ScriptedReply[],
): Promise<AgentFixture> => {
  const bin = claudeBin();
  if (bin === null) throw new Error("Cannot find the claude CLI");
  const server = await startAnthropicServer(replies);
  const env = claudeEnv(dir, server.url);
  await Deno.mkdir(env.HOME!, { recursive: true });
  const fixture: AgentFixture = {
    provider: "claude",
    agent: {
      bin,
      permission_mode: "acceptEdits",
      allowed_tools: CLAUDE_TOOLS,
      env: { CLAUDE_CODE_MAX_RETRIES: "0" },
    },
    model: null,
    env,
    server,
    close: () => server.close(),
  };
  return fixture;
};
