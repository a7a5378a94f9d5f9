/**
 * The transport seam of the contract calls: `amend`, `relax` and `contract`
 * reach a prompt's contract through one {@linkcode ContractTransport}. The
 * file transport (the packet and its state root on this machine) is the
 * first; a target names another in its `transport` field.
 *
 * @module
 */

import type { AmendmentRecord } from "../control/amendment_log.ts";
import type { Contract } from "../packet/contract.ts";

/** One line of a contract diff. */
export interface ContractDiffEntry {
  /** Kept, added by amendments, or removed by them. */
  change: "same" | "added" | "removed";
  /** The clause. */
  clause: string;
  /** The entry's label (its path, or `key=value` pairs). */
  entry: string;
}

/** A prompt's contract as the packet states it and as runs enforce it. */
export interface ContractView {
  /** The prompt. */
  prompt_id: string;
  /** The contract in the prompt file. */
  packet: Contract;
  /** The contract every run from this state root enforces. */
  enforced: Contract;
  /** Every amendment of the prompt, oldest first (persisted ones included). */
  amendments: AmendmentRecord[];
  /** The packet contract against the enforced one, clause by clause. */
  diff: ContractDiffEntry[];
}

/** A change to a prompt's contract, checked except for its entries. */
export interface AmendmentChange {
  /** `add` (amend) or `relax`. */
  direction: AmendmentRecord["direction"];
  /** The clause, a known one. */
  clause: AmendmentRecord["clause"];
  /** `add`, `drop` or `replace`. */
  operation: AmendmentRecord["operation"];
  /** The entries as given (none for `drop`): the transport checks them against the packet. */
  entries: unknown[];
  /** Why, trimmed and non-empty. */
  reason: string;
}

/** Who records a change, and how. */
export interface AmendmentOptions {
  /** Who amends; `$USER` when absent. */
  author?: string;
  /** Also write the change into the prompt file's `verify:` front matter. */
  persist?: boolean;
  /** How long to wait for other amendments' locks, in milliseconds. */
  lockTimeoutMs?: number;
  /**
   * The request the change answers, when it came as one (a fleet's
   * `amend`): its audit-log entry names it.
   */
  requestId?: string;
}

/**
 * A prompt's contract reached through a transport other than this
 * machine's files: the transport, and the address it gives the run's home
 * (as a `RunRef`'s `state_root`).
 */
export interface ContractTarget {
  /** The transport. */
  transport: ContractTransport;
  /** The run's home, as the transport names it. */
  state_root: string;
  /** The packet directory, when the transport has one. */
  packet_dir?: string;
}

/**
 * Where an amendment applies: a packet directory (its state root is
 * `PACKET/.prompt_runner`), a packet with an explicit state root, or a
 * {@linkcode ContractTarget} naming another transport.
 */
export type AmendTarget =
  | string
  | {
    /** The packet directory. */
    packet_dir: string;
    /** The state root; `PACKET/.prompt_runner` when absent. */
    state_root?: string;
  }
  | ContractTarget;

/**
 * How the contract calls reach a prompt's contract: one implementation per
 * transport. Each answers as the file transport does: the same records and
 * views, the same errors. It is apart from the control plane's `Transport`
 * only because contracts need the packet (a layer above the plane); one
 * object may be both.
 */
export interface ContractTransport {
  /** The transport's name (`file`, `memory`, …). */
  readonly name: string;
  /**
   * Records a change to a prompt's contract, durably and audited, once its
   * entries check out against the packet, and returns the record. A
   * transport that sends the change to the run's machine returns once that
   * machine has recorded it.
   *
   * @throws {UsageError} for a malformed prompt id or entry.
   * @throws {NotFoundError} for an unknown prompt or packet.
   * @throws {StateError} when it cannot be recorded (nothing is then).
   */
  recordAmendment(
    target: AmendTarget,
    promptId: string,
    change: AmendmentChange,
    options: AmendmentOptions,
  ): Promise<AmendmentRecord>;
  /**
   * Reads a prompt's contract view.
   *
   * @throws {UsageError} for a malformed prompt id.
   * @throws {NotFoundError} for an unknown prompt or packet.
   */
  contract(target: AmendTarget, promptId: string): Promise<ContractView>;
}
