/**
 * The contract a prompt is verified against: its prompt file's `verify:`
 * with the state root's amendments replayed in order.
 *
 * @module
 */

import {
  type AmendmentRecord,
  type ContractData,
  readAmendments,
  replayAmendments,
} from "../control/amendment_log.ts";
import { type Contract, parseContract } from "../packet/contract.ts";
import type { PromptSpec } from "../packet/packet.ts";
import { readPacketFile } from "../packet/packet_files.ts";
import { NotFoundError } from "../shared/errors.ts";

/** The enforced contract of a prompt, and what it was made from. */
export interface EnforcedContract {
  /** The contract the verifier enforces. */
  contract: Contract;
  /** The amendments folded in (empty when none). */
  amendments: unknown[];
  /** The amendments file, relative to the state root, when there is one. */
  amendments_file: string | null;
}

/** Options for {@linkcode promptContract}. */
export interface PromptContractOptions {
  /** The state root whose amendments apply; `null` for none (an in-memory run). */
  stateRoot: string | null;
  /** The repo names the packet declares (contract entries may name them). */
  repos: readonly string[];
  /** The packet directory: the prompt file is read only inside it. */
  packetDir: string;
}

/** A prompt's contract as it stands at one moment, and what it was made from. */
export interface PromptContract extends EnforcedContract {
  /** The contract in the prompt file, as read just now. */
  packet: Contract;
  /** Every amendment of the prompt, oldest first (persisted ones included). */
  records: AmendmentRecord[];
}

/**
 * Reads a prompt file's `verify:` as the file is now, never through a link
 * below the packet directory.
 *
 * @throws {NotFoundError} when the file is gone, {UsageError} when it cannot
 * be read or its front matter or contract is invalid; both name the file.
 * @throws {LinkRefusedError} when it (or its directory) is now a link.
 */
async function readPromptContract(
  packetDir: string,
  file: string,
  repos: readonly string[],
): Promise<Contract> {
  const text = await readPacketFile(packetDir, file, "prompt file");
  if (text === null) {
    throw new NotFoundError(
      `Cannot read prompt file "${file}": it no longer exists`,
      { code: "PROMPT_FILE_GONE" },
    );
  }
  const { parseFrontMatter } = await import("../packet/front_matter.ts");
  return parseContract(
    parseFrontMatter(text, file).attributes.verify,
    file,
    repos,
  );
}

/**
 * The contract a prompt has now: its prompt file's `verify:` read afresh
 * (a `--persist` amendment rewrites it, maybe while a run holds the packet
 * it loaded at start), then the state root's amendments that are not
 * persisted, replayed in order. Both `control contract` and every
 * verification of a run compute it this way, so they agree.
 *
 * @param prompt The prompt: its id and its file.
 * @param options The state root and the packet's repo names.
 * @returns The enforced contract, the packet's, and every amendment.
 * @throws {NotFoundError} when the prompt file is gone.
 * @throws {UsageError} when the prompt file cannot be read or is invalid,
 * naming the file.
 * @throws {LinkRefusedError} when the prompt file or a directory above it,
 * below the packet directory, is a link.
 * @throws {StateError} when an amendment line is torn or invalid.
 */
export async function promptContract(
  prompt: Pick<PromptSpec, "id" | "file">,
  options: PromptContractOptions,
): Promise<PromptContract> {
  const { stateRoot, repos, packetDir } = options;
  if (stateRoot === null) {
    const packet = await readPromptContract(packetDir, prompt.file, repos);
    return {
      packet,
      contract: packet,
      amendments: [],
      amendments_file: null,
      records: [],
    };
  }
  // The file and the records are read apart. A writer replaces the file
  // before it appends a persisted record (which replay skips), so a view is
  // consistent unless records were appended between the two reads: then
  // read again. A writer appends moments after it replaces the file, so
  // this settles.
  let records = await readAmendments(stateRoot, prompt.id);
  for (let look = 1;; look++) {
    const packet = await readPromptContract(packetDir, prompt.file, repos);
    const after = await readAmendments(stateRoot, prompt.id);
    const settled = JSON.stringify(after) === JSON.stringify(records);
    records = after;
    if (settled || look >= 10) {
      return { ...fold(prompt.id, packet, records), packet, records };
    }
  }
}

/**
 * The contract a state root enforces for a prompt: the packet's contract
 * with the state root's amendments replayed in order.
 *
 * @throws {StateError} when an amendment line is torn or invalid, naming
 * the file and the line.
 */
export async function enforcedContract(
  stateRoot: string,
  promptId: string,
  packetContract: Contract,
): Promise<EnforcedContract> {
  return fold(
    promptId,
    packetContract,
    await readAmendments(stateRoot, promptId),
  );
}

/** Replays a prompt's amendments that are not persisted onto its packet contract. */
function fold(
  promptId: string,
  packetContract: Contract,
  all: AmendmentRecord[],
): EnforcedContract {
  const records = all.filter((r) => !r.persisted);
  return {
    contract: replayAmendments(
      packetContract as ContractData,
      records,
    ) as Contract,
    amendments: records,
    amendments_file: records.length > 0 ? `amendments/${promptId}.jsonl` : null,
  };
}
