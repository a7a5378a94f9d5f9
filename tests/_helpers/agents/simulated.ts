/**
 * The simulated provider as an agent fixture: the model server's script
 * becomes a `simulate:` script, so the shared e2e suite runs the same
 * checks on the simulated provider as on the real CLIs.
 *
 * @module
 */

import type { ScriptedReply } from "../model_server/server.ts";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";

const STATUS_KINDS: Record<number, string> = {
  401: "provider_auth_claim",
  429: "provider_rate_limit",
  529: "provider_capacity",
};

/** A `simulate:` attempt step playing the model turns of `replies`. */
export function simulateStep(
  replies: ScriptedReply[],
): Record<string, unknown> {
  const thinking: string[] = [];
  const messages: string[] = [];
  const tools: Record<string, unknown>[] = [];
  const files = new Map<string, string>();
  let input = 0;
  let output = 0;
  let delay = 0;
  let error: Record<string, unknown> | null = null;
  for (const reply of replies) {
    if ("status" in reply) {
      error ??= {
        kind: STATUS_KINDS[reply.status] ?? "provider_runtime_claim",
        message: reply.message ?? `HTTP ${reply.status}`,
      };
      continue;
    }
    if ("hang" in reply || "drop" in reply) {
      error ??= { kind: "transport_disconnect", message: "stream dropped" };
      continue;
    }
    if (reply.thinking) thinking.push(reply.thinking);
    if (reply.text) messages.push(reply.text);
    delay = Math.max(delay, reply.delay_ms ?? 0);
    input += reply.usage?.input_tokens ?? 100;
    output += reply.usage?.output_tokens ?? 20;
    for (const tool of reply.tools ?? []) {
      if (tool.kind === "write") {
        files.set(tool.path, tool.content);
        tools.push({
          name: "Write",
          input: { file_path: tool.path, content: tool.content },
          output: "written",
        });
      } else if (tool.kind === "edit") {
        const before = files.get(tool.path) ?? "";
        files.set(tool.path, before.replace(tool.old, tool.new));
        tools.push({
          name: "Edit",
          input: {
            file_path: tool.path,
            old_string: tool.old,
            new_string: tool.new,
          },
          output: "edited",
        });
      } else {
        tools.push({
          name: "Bash",
          input: { command: tool.command },
          output: "",
        });
      }
    }
  }
  // A slow model turn (one to steer into) becomes a long stream of events.
  const slow = delay > 1000;
  return {
    ...(delay ? { delay_ms: slow ? 100 : delay } : {}),
    ...(slow ? { repeat: 6 } : {}),
    thinking,
    messages,
    tools,
    writes: [...files].map(([path, text]) => ({ path, text })),
    usage: { input_tokens: input, output_tokens: output },
    ...(error ? { error } : {}),
  };
}

/** The simulated provider, playing `replies` as one attempt. */
export const simulatedFixture: FixtureFactory = (
  _dir: string,
  replies: ScriptedReply[],
): Promise<AgentFixture> =>
  Promise.resolve({
    provider: "simulated",
    agent: {},
    model: null,
    env: {},
    server: null,
    prompt_front_matter: {
      simulate: { attempts: [simulateStep(replies)] },
    },
    close: () => Promise.resolve(),
  });
