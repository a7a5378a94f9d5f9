/**
 * What an amendment or a contract view is about: the packet a target names,
 * the prompt in it, and the state root its amendments live in.
 *
 * @module
 */

import { loadPacket } from "../packet/load_packet.ts";
import type { Packet, PromptSpec } from "../packet/packet.ts";
import { NotFoundError } from "../shared/errors.ts";
import { checkPromptId } from "../shared/prompt_id.ts";
import { locateRunTarget, type RunTarget } from "../workspace/run_location.ts";

export type { AmendTarget } from "./contract_transport.ts";

/** A prompt to amend, its packet, and the state root its amendments live in. */
export interface Resolved {
  packet: Packet;
  prompt: PromptSpec;
  stateRoot: string;
}

/**
 * Loads the packet a target names and finds the prompt in it.
 *
 * @throws {UsageError} for a malformed prompt id.
 * @throws {NotFoundError} for an unknown packet or prompt.
 */
export async function resolvePrompt(
  target: RunTarget,
  promptId: string,
): Promise<Resolved> {
  const id = checkPromptId(promptId);
  const packetDir = typeof target === "string" ? target : target.packet_dir;
  const packet = await loadPacket(packetDir);
  const stateRoot = locateRunTarget(target, packet.dir).state_root;
  const prompt = packet.prompts.find((p) => p.id === id);
  if (prompt === undefined) {
    throw new NotFoundError(
      `Unknown prompt id "${id}" in packet "${packet.dir}": the packet has ${
        packet.prompts.map((p) => p.id).join(", ")
      }`,
      { code: "PROMPT_NOT_FOUND" },
    );
  }
  return { packet, prompt, stateRoot };
}
