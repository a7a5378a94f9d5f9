/**
 * The Codex fixture: the real `codex` CLI pointed at the scripted
 * Responses API server, with a HOME of its own and a dummy key.
 *
 * Codex ignores `OPENAI_BASE_URL`. The built-in `openai` provider takes
 * `openai_base_url`, but it retries a failed request on its own (a 401 five
 * times, about 6 s; a 529 eight times) and first tries a WebSocket. So the
 * fixture declares a provider of its own, `scripted`, with
 * `request_max_retries = 0` and `stream_max_retries = 0`: a scripted error
 * or a dropped stream then ends the turn at once (`turn.failed`) and the
 * runner's own recovery is what a test sees. Custom providers speak HTTPS
 * only, so no WebSocket is tried. The model is `gpt-5.5`, whose tools are
 * `exec_command` and a freeform `apply_patch` (Codex's default model wraps
 * them in a JavaScript `exec` tool; the dialect speaks both). Codex runs on
 * its default transport, `codex app-server`; `codexExecFixture` runs
 * `codex exec --json`.
 *
 * @module
 */

import { join } from "node:path";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";
import type { ScriptedReply } from "../model_server/server.ts";
import { startOpenAiServer } from "../model_server/openai.ts";
import { agentBin } from "../agent_cli.ts";

/** The model the fixture names: its tools are the ones the dialect speaks. */
export const CODEX_TEST_MODEL = "gpt-5.5";

/** The dummy key (never a real one). */
export const CODEX_DUMMY_KEY = "sk-dummy-scripted-server";

/** The `agent.config` pairs that point Codex at `url` with no retries of its own. */
export function codexConfig(url: string): Record<string, string | number> {
  return {
    model_provider: "scripted",
    "model_providers.scripted.name": "scripted",
    "model_providers.scripted.base_url": `${url}/v1`,
    "model_providers.scripted.wire_api": "responses",
    "model_providers.scripted.env_key": "OPENAI_API_KEY",
    "model_providers.scripted.request_max_retries": 0,
    "model_providers.scripted.stream_max_retries": 0,
    openai_base_url: `${url}/v1`,
  };
}

/** What a codex test may change in the fixture's `agent:` block. */
export interface CodexFixtureOptions {
  /** `agent.transport`: absent for the default (`app_server`), or `exec`. */
  transport?: "app_server" | "exec";
  /** Keys that replace the fixture's (`sandbox`, `approval_policy`, …). */
  agent?: Record<string, unknown>;
}

/**
 * Starts the server and sets up Codex for a test in `dir`: on its default
 * transport (`codex app-server`) unless `options.transport` says `exec`.
 */
export const codexFixture = async (
  dir: string,
  replies: ScriptedReply[],
  options: CodexFixtureOptions = {},
): Promise<AgentFixture> => {
  const bin = agentBin("codex");
  if (bin === null) throw new Error("The codex CLI is not installed");
  const home = join(dir, "codex_home");
  await Deno.mkdir(home, { recursive: true });
  const server = await startOpenAiServer(replies);
  return {
    provider: "codex",
    agent: {
      bin,
      sandbox: "workspace-write",
      approval_policy: "never",
      config: codexConfig(server.url),
      ...(options.transport ? { transport: options.transport } : {}),
      ...options.agent,
    },
    model: CODEX_TEST_MODEL,
    env: {
      HOME: home,
      CODEX_API_KEY: CODEX_DUMMY_KEY,
      OPENAI_API_KEY: CODEX_DUMMY_KEY,
    },
    server,
    close: () => server.close(),
  };
};

/** The fixture on the `exec` lane (`codex exec --json`). */
export const codexExecFixture: FixtureFactory = (
  dir: string,
  replies: ScriptedReply[],
): Promise<AgentFixture> => codexFixture(dir, replies, { transport: "exec" });
