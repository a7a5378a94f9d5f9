/**
 * The verifier: checks a contract against the workspace, clause by clause.
 *
 * @module
 */

import type { Contract } from "../packet/contract.ts";
import { checkChangedPaths } from "./changed_paths.ts";
import { checkCommands } from "./commands.ts";
import { checkContains, checkMatches } from "./content.ts";
import { checkFilesAbsent, checkFilesExist } from "./files.ts";
import {
  summarizeItems,
  type VerifyItem,
  type VerifyReport,
} from "./report.ts";
import type { VerifyScope } from "./scope.ts";

export type { VerifyScope };

/**
 * Checks a contract against the workspace and reports every entry as passed,
 * failed or faulted, with a reason. The contract is whatever the caller
 * enforces: the packet's, or the packet's with amendments. Only the
 * workspace is evidence.
 *
 * Requires `--allow-read`, and `--allow-run` for `commands` and
 * `changed_paths_only`.
 *
 * @param contract The contract to enforce.
 * @param scope Where entries resolve: the prompt's working directory and the
 * packet's repos.
 * @returns The report; an empty contract passes with no items.
 *
 * @example Usage
 * ```ts
 * import { verifyContract } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/NOTES.md`, "hello\n");
 * const report = await verifyContract(
 *   { files_exist: ["NOTES.md"], contains: [{ path: "NOTES.md", text: "bye" }] },
 *   { cwd: dir, repos: {} },
 * );
 * assert.equal(report.passed, false);
 * assert.deepEqual(report.items.map((item) => item.status), ["pass", "fail"]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function verifyContract(
  contract: Contract,
  scope: VerifyScope,
): Promise<VerifyReport> {
  const items: VerifyItem[] = [];
  if (contract.files_exist) {
    items.push(...await checkFilesExist(contract.files_exist, scope));
  }
  if (contract.files_absent) {
    items.push(...await checkFilesAbsent(contract.files_absent, scope));
  }
  if (contract.contains) {
    items.push(...await checkContains(contract.contains, scope));
  }
  if (contract.matches) {
    items.push(...await checkMatches(contract.matches, scope));
  }
  if (contract.commands) {
    items.push(...await checkCommands(contract.commands, scope));
  }
  if (contract.changed_paths_only) {
    items.push(...await checkChangedPaths(contract.changed_paths_only, scope));
  }
  return summarizeItems(items);
}
