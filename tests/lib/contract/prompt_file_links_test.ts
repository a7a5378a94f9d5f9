/**
 * The prompt file is read and rewritten only inside the packet, never
 * through a link (issue 19): `amend`/`relax` with `persist`, `contract`,
 * and every verification of a run refuse a prompt file or a prompt
 * directory that is a link, even one swapped in after the packet loaded;
 * the file the link leads to is never read for a contract nor written.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { amend, relax } from "../../../lib/contract/amend_contract.ts";
import { resolvePrompt } from "../../../lib/contract/amendment_target.ts";
import { contract } from "../../../lib/contract/contract_view.ts";
import { runPacket } from "../../../lib/runner/mod.ts";
import { recordAmendment } from "../../../lib/contract/record_amendment.ts";
import { LinkRefusedError, pathExists } from "../../../lib/shared/mod.ts";
import {
  linkOutOfPacket,
  makePacket,
  promptFile,
} from "../../_helpers/temp_packet.ts";

const NOTES = promptFile(
  `verify: {files_exist: [NOTES.md]}
simulate: {attempts: [{delay_ms: 20, repeat: 3, messages: [working], writes: [{path: NOTES.md, text: done}]}]}`,
);

const NAMES = {
  prompt: "a prompt file",
  prompts: "a prompts/ directory",
  manifest: "a manifest",
} as const;

for (const part of ["prompt", "prompts"] as const) {
  Deno.test(`amend() and relax() with persist refuse ${NAMES[part]} that is a link out of the packet: the outside file and the link stay as they were, nothing is recorded`, async () => {
    await using packet = await makePacket({
      prompts: { "01_notes.prompt.md": NOTES },
    });
    const { link, outside } = await linkOutOfPacket(packet, part);
    const before = await Deno.readTextFile(outside);
    const options = { reason: "r", persist: true, author: "ada" };
    await assert.rejects(
      amend(packet.dir, "01", {
        ...options,
        clause: "files_exist",
        entries: ["X.md"],
      }),
      LinkRefusedError,
    );
    await assert.rejects(
      relax(packet.dir, "01", {
        ...options,
        clause: "files_exist",
        confirm: true,
      }),
      LinkRefusedError,
    );
    await assert.rejects(contract(packet.dir, "01"), LinkRefusedError);
    assert.equal(await Deno.readTextFile(outside), before);
    assert.ok((await Deno.lstat(link)).isSymlink, "the link was replaced");
    assert.equal(
      await pathExists(join(packet.stateRoot, "amendments", "01.jsonl")),
      false,
    );
  });

  Deno.test(`a persisted amendment refuses ${NAMES[part]} swapped for a link after the packet was loaded, and writes nothing where it leads`, async () => {
    await using packet = await makePacket({
      prompts: { "01_notes.prompt.md": NOTES },
    });
    const resolved = await resolvePrompt(packet.dir, "01");
    const { link, outside } = await linkOutOfPacket(packet, part);
    const before = await Deno.readTextFile(outside);
    await assert.rejects(
      recordAmendment(resolved, {
        direction: "add",
        clause: "files_exist",
        operation: "add",
        entries: ["X.md"],
        reason: "r",
      }, { author: "ada", persist: true }),
      (error: unknown) =>
        error instanceof LinkRefusedError &&
        error.path.endsWith(
          part === "prompt" ? "/prompts/01_notes.prompt.md" : "/prompts",
        ),
    );
    assert.equal(await Deno.readTextFile(outside), before);
    assert.ok((await Deno.lstat(link)).isSymlink, "the link was replaced");
    assert.deepEqual(
      (await Array.fromAsync(Deno.readDir(join(outside, "..")))).map((e) =>
        e.name
      ),
      ["01_notes.prompt.md"],
      "a temporary file was made beside the outside file",
    );
    assert.equal(
      await pathExists(join(packet.stateRoot, "amendments", "01.jsonl")),
      false,
    );
  });
}

Deno.test("a run whose prompt file is swapped for a link while it runs refuses to verify against it (a verifier fault naming the link)", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  // The same contract, but one the verifier must never read.
  const outside = join(packet.root, "outside.prompt.md");
  await Deno.writeTextFile(outside, NOTES);
  let swapped = false;
  const result = await runPacket(packet.dir, {
    onEvent: async (event) => {
      if (!swapped && event.type === "prompt_started") {
        swapped = true;
        await Deno.remove(file);
        await Deno.symlink(outside, file);
      }
    },
  });
  assert.ok(swapped);
  assert.equal(result.status, "failed");
  const outcome = result.prompts["01"];
  assert.equal(outcome?.status, "verifier_fault");
  assert.match(
    outcome?.reason ?? "",
    /^cannot verify: Refused to use ".*\/prompts\/01_notes\.prompt\.md": it is a link/,
  );
});
