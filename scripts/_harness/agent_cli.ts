/**
 * Finding the real agent CLIs for tests: `.ci/run` installs pinned versions
 * into `.ci/.agents/` and puts them first on `PATH`. A test that needs a CLI
 * which is absent is skipped with a loud message naming it.
 *
 * @module
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The agent CLIs the tests drive, with the npm package each comes from. */
export const AGENT_PACKAGES = {
  claude: "@anthropic-ai/claude-code",
  codex: "@openai/codex",
  gemini: "@google/gemini-cli",
  amp: "@sourcegraph/amp",
  "claude-code-acp": "@zed-industries/claude-code-acp",
} as const;

/** An agent CLI's name. */
export type AgentName = keyof typeof AGENT_PACKAGES;

const LOCAL_BIN = fileURLToPath(
  new URL("../../.ci/.agents/node_modules/.bin/", import.meta.url),
);

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The absolute path of an agent CLI: `.ci/.agents/node_modules/.bin/NAME`,
 * else the first `NAME` on `PATH`, else `null`.
 */
export function agentBin(name: AgentName): string | null {
  const local = join(LOCAL_BIN, name);
  if (isExecutable(local)) return local;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

const warned = new Set<string>();

/**
 * Whether a test needing `name` can run; when not, says so loudly (once per
 * CLI) so that a skipped test never passes for a run one.
 */
export function agentAvailable(name: AgentName): boolean {
  if (agentBin(name) !== null) return true;
  if (!warned.has(name)) {
    warned.add(name);
    // deno-lint-ignore no-console -- a skipped test must be loud
    console.error(
      `\n!!! SKIPPED: the ${name} CLI is not installed (npm ${
        AGENT_PACKAGES[name]
      }); .ci/run installs it into .ci/.agents/. Tests that need it were skipped.\n`,
    );
  }
  return false;
}
