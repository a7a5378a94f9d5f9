/**
 * A packet for an agent fixture: a manifest naming the fixture's provider,
 * model and `agent:` block, one prompt with a contract, and a git workspace
 * for the agent to work in.
 *
 * @module
 */

import { join } from "node:path";
import { makeRepo } from "../repo.ts";
import type { AgentFixture } from "./fixture.ts";

/** What the packet asks of the agent. */
export interface AgentPacketOptions {
  /** The prompt's `verify:` contract. */
  verify: Record<string, unknown>;
  /** The manifest's `recovery:` (retry delays are zero unless given). */
  recovery?: Record<string, unknown>;
  /** The attempt timeout (default 90 s). */
  timeout_ms?: number;
  /** The prompt's body. */
  body?: string;
}

/** A packet on disk. */
export interface AgentPacket {
  /** The packet directory. */
  dir: string;
  /** The agent's working directory (a git repo). */
  workspace: string;
  /** The packet's state root. */
  stateRoot: string;
}

/** Writes a packet under `dir` for `fixture`. */
export async function makeAgentPacket(
  dir: string,
  fixture: AgentFixture,
  options: AgentPacketOptions,
): Promise<AgentPacket> {
  const packet = join(dir, "packet");
  const workspace = join(packet, "workspace");
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await makeRepo(workspace);
  const recovery = {
    retry: { base_delay_ms: 0, max_delay_ms: 0 },
    ...options.recovery,
  };
  // JSON is YAML: every value is written as a JSON flow collection.
  const manifest = [
    "---",
    "name: agent-packet",
    `provider: ${fixture.provider}`,
    ...(fixture.model ? [`model: ${JSON.stringify(fixture.model)}`] : []),
    "repos:",
    "  app: {path: workspace, default: true}",
    `recovery: ${JSON.stringify(recovery)}`,
    `timeout_ms: ${options.timeout_ms ?? 90_000}`,
    ...(Object.keys(fixture.agent).length
      ? [`agent: ${JSON.stringify(fixture.agent)}`]
      : []),
    "---",
    "A packet for an agent test.",
    "",
  ].join("\n");
  await Deno.writeTextFile(join(packet, "prompt_runner_packet.md"), manifest);
  const front = {
    verify: options.verify,
    ...(fixture.prompt_front_matter ?? {}),
  };
  await Deno.writeTextFile(
    join(packet, "prompts", "01_task.prompt.md"),
    [
      "---",
      ...Object.entries(front).map(([key, value]) =>
        `${key}: ${JSON.stringify(value)}`
      ),
      "---",
      options.body ?? "Create NOTES.md, then edit it as the task says.",
      "",
    ].join("\n"),
  );
  return { dir: packet, workspace, stateRoot: join(packet, ".prompt_runner") };
}
