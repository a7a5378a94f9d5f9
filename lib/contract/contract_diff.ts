/**
 * A contract view from its parts: the packet's contract, the enforced one,
 * and the diff between the two, clause by clause.
 *
 * @module
 */

import type {
  AmendmentRecord,
  ContractData,
} from "../control/amendment_log.ts";
import { type Contract, describeEntry } from "../packet/contract.ts";
import type { ContractDiffEntry, ContractView } from "./contract_transport.ts";

function diffContracts(before: Contract, after: Contract): ContractDiffEntry[] {
  const a = before as ContractData;
  const b = after as ContractData;
  const clauses = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  const diff: ContractDiffEntry[] = [];
  for (const clause of clauses) {
    const left = (a[clause] ?? []).map(describeEntry);
    const right = (b[clause] ?? []).map(describeEntry);
    const remaining = [...right];
    const removed: string[] = [];
    for (const label of left) {
      const index = remaining.indexOf(label);
      if (index >= 0) {
        remaining.splice(index, 1);
        diff.push({ change: "same", clause, entry: label });
      } else {
        removed.push(label);
      }
    }
    for (const label of removed) {
      diff.push({ change: "removed", clause, entry: label });
    }
    for (const label of remaining) {
      diff.push({ change: "added", clause, entry: label });
    }
  }
  return diff;
}

/** The contract view of a prompt from its packet contract and amendments. */
export function contractViewOf(
  promptId: string,
  packet: Contract,
  enforced: Contract,
  amendments: AmendmentRecord[],
): ContractView {
  return {
    prompt_id: promptId,
    packet,
    enforced,
    amendments,
    diff: diffContracts(packet, enforced),
  };
}
