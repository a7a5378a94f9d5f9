/**
 * The Gemini CLI fixture for provider e2e tests: the real `gemini` CLI,
 * pointed at the scripted Gemini API server with a dummy key and a HOME in
 * the test's directory, running its tools unattended (`approval_mode:
 * yolo`), on gemini's default transport, ACP (`gemini --acp`); a test of
 * the older lane adds `transport: stream_json` to the `agent:` block.
 *
 * The HOME gets a `~/.gemini/settings.json` that
 * - selects API-key auth: with `GOOGLE_GEMINI_BASE_URL` set and no auth
 *   type chosen, 0.61.0 picks its "gateway" auth type, which headless mode
 *   refuses (`Invalid auth method selected.`, exit 41);
 * - sets `general.maxAttempts: 1`: no retries of the CLI's own (by default
 *   10 attempts with a 5 s backoff for a 429 or a 5xx, and up to 3 more for
 *   a stream cut mid-way, each taking the script's next reply). A test
 *   scripts each failure once; the runner's policy does the rest.
 *
 * @module
 */

import { join } from "node:path";
import { agentBin } from "../agent_cli.ts";
import { startGeminiServer } from "../model_server/gemini.ts";
import type { ScriptedReply } from "../model_server/server.ts";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";

/** The model the fixture names (a concrete one: never `auto`). */
export const GEMINI_TEST_MODEL = "gemini-2.5-pro";

/** The settings a scripted Gemini CLI run needs (see the module doc). */
export const GEMINI_TEST_SETTINGS = {
  security: { auth: { selectedType: "gemini-api-key" } },
  general: { maxAttempts: 1 },
};

/**
 * Makes a HOME under `dir` for the Gemini CLI and returns the environment
 * for a run against `url`: that HOME, the base URL and a dummy key.
 */
export async function geminiHome(
  dir: string,
  url: string,
): Promise<Record<string, string>> {
  const home = join(dir, "gemini_home");
  await Deno.mkdir(join(home, ".gemini"), { recursive: true });
  await Deno.writeTextFile(
    join(home, ".gemini", "settings.json"),
    JSON.stringify(GEMINI_TEST_SETTINGS, null, 2),
  );
  return {
    HOME: home,
    GOOGLE_GEMINI_BASE_URL: url,
    GEMINI_API_KEY: "gemini-scripted-dummy-key",
  };
}

/** Starts the scripted server and describes the real `gemini` CLI. */
export const geminiFixture: FixtureFactory = async (
  dir: string,
  replies: ScriptedReply[],
): Promise<AgentFixture> => {
  const bin = agentBin("gemini");
  if (bin === null) throw new Error("Cannot find the gemini CLI");
  const server = await startGeminiServer(replies);
  try {
    const env = await geminiHome(dir, server.url);
    return {
      provider: "gemini",
      agent: { bin, approval_mode: "yolo" },
      model: GEMINI_TEST_MODEL,
      env,
      server,
      close: () => server.close(),
    };
  } catch (error) {
    await server.close();
    throw error;
  }
};
