/**
 * The verifier: checks a contract against the workspace.
 *
 * @module
 */

export { verifyContract } from "./verify_contract.ts";
export type { VerifyScope } from "./scope.ts";
export type { ItemStatus, VerifyItem, VerifyReport } from "./report.ts";
