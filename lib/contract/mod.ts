/**
 * A prompt's contract after the packet: the contract a verification
 * enforces (the prompt file's `verify:` with the state root's amendments),
 * `amend` and `relax` (recorded, and with `persist` written into the prompt
 * file), and the contract view `control contract` shows.
 *
 * @module
 */

export {
  amend,
  type AmendOptions,
  relax,
  type RelaxOptions,
} from "./amend_contract.ts";
export type {
  AmendmentChange,
  AmendmentOptions,
  AmendTarget,
  ContractDiffEntry,
  ContractTarget,
  ContractTransport,
  ContractView,
} from "./contract_transport.ts";
export { contract } from "./contract_view.ts";
export { contractViewOf } from "./contract_diff.ts";
export { fileContracts } from "./file_contracts.ts";
export {
  type EnforcedContract,
  enforcedContract,
} from "./enforced_contract.ts";
