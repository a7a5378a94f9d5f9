/**
 * The file contract transport: a prompt's contract on this machine, its
 * packet read (and with `persist` rewritten) in place and its amendments
 * recorded in the state root under its locks. The first contract
 * transport, and the one a packet directory or `{ packet_dir, state_root }`
 * names.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import { checkEntry, type Clause } from "../packet/contract.ts";
import { errorText, UsageError } from "../shared/errors.ts";
import type { RunTarget } from "../workspace/run_location.ts";
import { resolvePrompt } from "./amendment_target.ts";
import { contractViewOf } from "./contract_diff.ts";
import type {
  AmendTarget,
  ContractTarget,
  ContractTransport,
  ContractView,
} from "./contract_transport.ts";
import { promptContract } from "./enforced_contract.ts";
import { recordAmendment } from "./record_amendment.ts";

export type { AmendTarget } from "./contract_transport.ts";

/**
 * Checks a change's entries against a packet's repos, in the clause's
 * shape, as every contract transport checks them.
 *
 * @throws {UsageError} for no entry, or an entry of the wrong shape.
 */
export function checkEntries(
  clause: Clause,
  entries: unknown,
  repos: readonly string[],
): unknown[] {
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new UsageError(`Name at least one ${clause} entry`, {
      code: "NO_ENTRIES",
    });
  }
  return entries.map((entry) => {
    try {
      return checkEntry(clause, entry, repos);
    } catch (error) {
      throw new UsageError(
        `Invalid ${clause} entry ${JSON.stringify(entry)}: ${errorText(error)}`,
        { code: "INVALID_ENTRY" },
      );
    }
  });
}

/** Whether a target names a transport of its own. */
function isContractTarget(target: AmendTarget): target is ContractTarget {
  return typeof target === "object" && "transport" in target &&
    target.transport !== undefined;
}

/** The packet (and state root) a file target names. */
function fileTarget(target: AmendTarget): RunTarget {
  if (!isContractTarget(target)) return target;
  if (target.packet_dir === undefined) {
    throw new UsageError(
      `Cannot reach the contract at "${target.state_root}" through files: the target names no packet`,
      { code: "NO_PACKET" },
    );
  }
  return { packet_dir: target.packet_dir, state_root: target.state_root };
}

/**
 * The file contract transport: reads the packet and the state root's
 * amendments, and records an amendment (with `persist`, into the prompt
 * file too) under the state root's amendments lock.
 */
export const fileContracts: ContractTransport = {
  name: "file",
  async recordAmendment(
    target,
    promptId,
    change,
    options,
  ): Promise<AmendmentRecord> {
    const resolved = await resolvePrompt(fileTarget(target), promptId);
    const entries = change.operation === "drop" ? [] : checkEntries(
      change.clause as Clause,
      change.entries,
      resolved.packet.repos.map((repo) => repo.name),
    );
    return await recordAmendment(resolved, { ...change, entries }, options);
  },
  async contract(target, promptId): Promise<ContractView> {
    const { packet, prompt, stateRoot } = await resolvePrompt(
      fileTarget(target),
      promptId,
    );
    const current = await promptContract(prompt, {
      stateRoot,
      repos: packet.repos.map((repo) => repo.name),
      packetDir: packet.dir,
    });
    return contractViewOf(
      prompt.id,
      current.packet,
      current.contract,
      current.records,
    );
  },
};

/**
 * The contract transport a target names: its `transport`, else the files.
 *
 * @throws {UsageError} when `target.transport` is not a contract transport.
 */
export function contractTransportOf(target: AmendTarget): ContractTransport {
  if (!isContractTarget(target)) return fileContracts;
  const candidate = target.transport as Partial<ContractTransport>;
  if (
    typeof candidate.recordAmendment !== "function" ||
    typeof candidate.contract !== "function"
  ) {
    throw new UsageError(
      `Cannot reach the contract at "${target.state_root}": its transport ${
        JSON.stringify(String(candidate.name))
      } is not a contract transport`,
      { code: "BAD_TRANSPORT" },
    );
  }
  return target.transport;
}
