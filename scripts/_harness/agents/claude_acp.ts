/**
 * The ACP fixture: `provider: acp` with `agent.bin` = `claude-code-acp`
 * (0.16.2), driving the real `claude` (`CLAUDE_CODE_EXECUTABLE`) against
 * the scripted Anthropic server.
 *
 * `IS_SANDBOX` is emptied: with it set, the adapter asks claude to allow
 * skipping permissions, which claude refuses as root (`session/new` then
 * fails with "Query closed before response received").
 *
 * @module
 */

import { agentBin } from "../agent_cli.ts";
import { claudeBin, claudeEnv } from "./claude.ts";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";
import { startAnthropicServer } from "../model_server/anthropic.ts";
import type { ScriptedReply } from "../model_server/server.ts";

/** Starts the server and sets up claude-code-acp for a test in `dir`. */
export const claudeAcpFixture: FixtureFactory = async (
  dir: string,
  replies: ScriptedReply[],
): Promise<AgentFixture> => {
  const bin = agentBin("claude-code-acp");
  const claude = claudeBin();
  if (bin === null || claude === null) {
    throw new Error("Cannot find claude-code-acp and claude");
  }
  const server = await startAnthropicServer(replies);
  const env = claudeEnv(dir, server.url);
  await Deno.mkdir(env.HOME!, { recursive: true });
  return {
    provider: "acp",
    agent: {
      bin,
      env: {
        CLAUDE_CODE_EXECUTABLE: claude,
        CLAUDE_CODE_MAX_RETRIES: "0",
        IS_SANDBOX: "",
      },
      permissions: { read: "allow", edit: "allow", execute: "allow" },
    },
    model: null,
    env,
    server,
    close: () => server.close(),
  };
};
