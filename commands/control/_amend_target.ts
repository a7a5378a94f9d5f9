/**
 * Resolving `[TARGET] PROMPT_ID` for contract, amend and relax: these need
 * the packet as well as the state root.
 *
 * @module
 */

import { resolve } from "node:path";
import type { AmendTarget } from "../../lib/runner/mod.ts";
import { isDirectory, UsageError } from "../../lib/shared/mod.ts";
import {
  isWorkspaceId,
  lookupWorkspace,
  resolveRunLocation,
  runTargetOf,
} from "../../lib/workspace/mod.ts";
import type { WorkspaceFlags } from "./_target.ts";
import { isPromptIdWord } from "../../lib/shared/prompt_id.ts";

/**
 * Splits `[TARGET] PROMPT_ID` and resolves TARGET (a workspace id with a
 * packet binding, a packet directory, or a state root whose snapshot names
 * its packet; default: the current directory), or `--workspace FILE
 * [--packet DIR]`.
 */
export async function resolveAmendTarget(
  command: string,
  positionals: string[],
  cwd: string,
  stateRoot: string | undefined,
  workspace: WorkspaceFlags = {},
): Promise<{ target: AmendTarget; promptId: string }> {
  if (positionals.length > 2) {
    throw new UsageError(
      `Too many arguments: expected [TARGET] PROMPT_ID, found ${positionals.length} arguments`,
      { hint: `Run 'prompt_runner control ${command} --help'` },
    );
  }
  const promptId = positionals.at(-1);
  if (
    promptId === undefined ||
    (positionals.length === 1 && !isPromptIdWord(promptId) &&
      (await isDirectory(resolve(cwd, promptId)) ||
        (isWorkspaceId(promptId) && await lookupWorkspace(promptId) !== null)))
  ) {
    throw new UsageError("A prompt id is required", {
      hint: `Run 'prompt_runner control ${command} [TARGET] PROMPT_ID'`,
    });
  }
  const location = await resolveRunLocation(
    positionals.length === 2 ? positionals[0] : undefined,
    {
      needs: "packet_and_state_root",
      cwd,
      stateRoot,
      command: `control ${command}`,
      ...workspace,
    },
  );
  return { target: runTargetOf(location), promptId };
}
