/**
 * Recording an amendment: appended (synced) to the state root's
 * `amendments/<prompt>.jsonl` and logged, and with `persist` written into
 * the prompt file, all under the state root's amendments lock.
 *
 * @module
 */

import {
  type AmendmentRecord,
  AMENDMENTS_LOCK_TIMEOUT_MS,
  amendmentsFile,
  amendmentsSize,
  appendAmendment,
  type ContractData,
  logAmendment,
  readAmendments,
  replayAmendments,
  withAmendmentsLock,
} from "../control/amendment_log.ts";
import { controlPaths } from "../control/paths.ts";
import { defaultAuthor } from "../control/request.ts";
import { readSnapshotFile } from "../control/snapshot.ts";
import { parseContract } from "../packet/contract.ts";
import { errorText, StateError } from "../shared/errors.ts";
import { openStateRoot } from "../shared/state_root.ts";
import { amendmentPhase } from "./amendment_phase.ts";
import type { Resolved } from "./amendment_target.ts";
import { withPromptFile } from "./hold_prompt_file.ts";

/** The front-matter module, with the YAML parser, loaded when first needed. */
async function frontMatter(): Promise<
  typeof import("../packet/front_matter.ts")
> {
  return await import("../packet/front_matter.ts");
}

/**
 * Appends an amendment and logs it, whole or not at all: when either
 * fails, the amendments file is cut back to its old size and `undo` runs
 * (it puts the prompt file back). Called under the amendments lock, so no
 * other writer appends meanwhile.
 */
async function commit(
  stateRoot: string,
  amendment: AmendmentRecord,
  requestId: string | null,
  undo?: () => Promise<void>,
): Promise<void> {
  const size = await amendmentsSize(stateRoot, amendment.prompt);
  try {
    await appendAmendment(stateRoot, amendment);
    await logAmendment(stateRoot, amendment, requestId);
  } catch (error) {
    await Deno.truncate(amendmentsFile(stateRoot, amendment.prompt), size)
      .catch(() => {});
    let restored = true;
    try {
      await undo?.();
    } catch {
      restored = false;
    }
    const message = errorText(error);
    throw new StateError(
      restored
        ? `Cannot record the amendment in state root "${stateRoot}": ${message}`
        : `Cannot record the amendment in state root "${stateRoot}": ${message}; the prompt file could not be put back and still holds the change`,
      {
        code: "AMENDMENT_NOT_RECORDED",
        hint: restored
          ? "Nothing was recorded. Fix the cause and try again"
          : "Nothing was recorded in the state root: revert the prompt file's verify: change by hand",
        cause: error,
      },
    );
  }
}

/**
 * Records an amendment under the state root's amendments lock: appended,
 * logged, and with `persist` written into the prompt file too; whole or
 * not at all.
 */
export async function recordAmendment(
  resolved: Resolved,
  change: Pick<
    AmendmentRecord,
    "direction" | "clause" | "operation" | "entries" | "reason"
  >,
  options: {
    author?: string;
    persist?: boolean;
    lockTimeoutMs?: number;
    requestId?: string;
  },
): Promise<AmendmentRecord> {
  const { packet, prompt } = resolved;
  const author = await defaultAuthor(options.author);
  const stateRoot = await openStateRoot(resolved.stateRoot, { create: true });
  const timeoutMs = options.lockTimeoutMs ?? AMENDMENTS_LOCK_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  // Writers take turns: each reads what the last one wrote (the prompt file
  // included) under the lock, so none is lost, and records keep their order.
  return await withAmendmentsLock(stateRoot, async () => {
    // Refuse a state root whose amendments cannot be read before adding one.
    await readAmendments(stateRoot, prompt.id);
    const snapshot = await readSnapshotFile(controlPaths(stateRoot).snapshot)
      .catch(() => null);
    const amendment: AmendmentRecord = {
      at: new Date().toISOString(),
      prompt: prompt.id,
      author,
      reason: change.reason,
      phase: await amendmentPhase(stateRoot, prompt.id),
      direction: change.direction,
      clause: change.clause,
      operation: change.operation,
      entries: change.entries,
      run_id: snapshot?.run_id ?? null,
      persisted: options.persist === true,
    };
    if (!amendment.persisted) {
      await commit(stateRoot, amendment, options.requestId ?? null);
      return amendment;
    }
    return await withPromptFile(resolved, deadline, async (held) => {
      // The file as it is now, not as the packet loaded before the lock.
      const verify = parseContract(
        (await frontMatter()).parseFrontMatter(held.text, prompt.file)
          .attributes.verify,
        prompt.file,
        packet.repos.map((repo) => repo.name),
      );
      const folded = replayAmendments(verify as ContractData, [
        { ...amendment, persisted: false },
      ]);
      await held.replace((await frontMatter()).setFrontMatterKey(
        held.text,
        "verify",
        Object.keys(folded).length > 0 ? folded : undefined,
        prompt.file,
      ));
      // Without its record, the change must not stand in the packet either.
      await commit(
        stateRoot,
        amendment,
        options.requestId ?? null,
        () => held.replace(held.text),
      );
      return amendment;
    });
  }, { timeoutMs });
}
