/**
 * A packet is read only inside its directory (DESIGN §11, issue 19): the
 * manifest, the prompt directory and every prompt file are checked
 * component by component, and a link among them is refused (exit 4),
 * never followed. The packet directory itself may be a link.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPacket, MANIFEST_FILE } from "../../../lib/packet/load_packet.ts";
import { LinkRefusedError, UsageError } from "../../../lib/shared/errors.ts";
import {
  linkOutOfPacket,
  makePacket,
  promptFile,
} from "../../_helpers/temp_packet.ts";

const PROMPT = promptFile("verify: {files_exist: [NOTES.md]}");

/** The error `promise` rejects with, asserted to be a `type`. */
async function refusal<T extends Error>(
  promise: Promise<unknown>,
  type: new (...args: never[]) => T,
): Promise<T> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof type, String(error));
    return error;
  }
  assert.fail(`expected a ${type.name}`);
}

const NAMES = {
  prompt: "a prompt file",
  prompts: "a prompts/ directory",
  manifest: "a manifest",
} as const;

for (const part of ["prompt", "prompts", "manifest"] as const) {
  Deno.test(`loadPacket() refuses ${NAMES[part]} that is a link out of the packet (exit 4), naming the link`, async () => {
    await using packet = await makePacket({
      prompts: { "01_notes.prompt.md": PROMPT },
      git: false,
    });
    const { link } = await linkOutOfPacket(packet, part);
    const error = await refusal(loadPacket(packet.dir), LinkRefusedError);
    const real = await Deno.realPath(packet.dir);
    const named = link.replace(packet.dir, real);
    assert.equal(error.exitCode, 4);
    assert.equal(error.code, "LINK_REFUSED");
    assert.equal(error.path, named);
    assert.equal(
      error.message,
      `Refused to use "${named}": it is a link, and prompt_runner reads a packet's manifest, prompt directory and prompt files only inside the packet, never through a link`,
    );
    assert.match(error.hint ?? "", /the packet directory itself may be a link/);
  });
}

Deno.test("loadPacket() refuses a prompt file that is a link even when it leads to a file inside the packet", async () => {
  await using packet = await makePacket({ git: false });
  await Deno.mkdir(join(packet.dir, "shared"));
  await Deno.writeTextFile(join(packet.dir, "shared", "01.md"), PROMPT);
  await Deno.symlink(
    "../shared/01.md",
    join(packet.dir, "prompts", "01_notes.prompt.md"),
  );
  await assert.rejects(loadPacket(packet.dir), LinkRefusedError);
});

Deno.test("loadPacket() still reads a packet whose directory is itself a link", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": PROMPT },
    git: false,
  });
  const link = join(packet.root, "linked");
  await Deno.symlink(packet.dir, link);
  const loaded = await loadPacket(link);
  assert.equal(loaded.dir, await Deno.realPath(packet.dir));
  assert.deepEqual(loaded.prompts.map((p) => p.id), ["01"]);
});

Deno.test("loadPacket() refuses a prompt_dir that leads out of the packet by name (exit 2, naming the key)", async () => {
  for (const given of ["../elsewhere", "/tmp"]) {
    await using packet = await makePacket({
      manifest: `prompt_dir: ${given}`,
      git: false,
    });
    await Deno.mkdir(join(packet.root, "elsewhere"));
    await Deno.writeTextFile(
      join(packet.root, "elsewhere", "01_notes.prompt.md"),
      PROMPT,
    );
    const error = await refusal(loadPacket(packet.dir), UsageError);
    assert.match(
      error.message,
      new RegExp(
        `^Invalid packet file ".*${MANIFEST_FILE}": prompt_dir must name a directory inside the packet, found "${given}"$`,
      ),
    );
  }
});

Deno.test("loadPacket() names a prompts/ that is a file, and a prompt that is a directory, as invalid (exit 2)", async () => {
  await using packet = await makePacket({ git: false });
  await Deno.remove(join(packet.dir, "prompts"), { recursive: true });
  await Deno.writeTextFile(join(packet.dir, "prompts"), "not a directory\n");
  await assert.rejects(
    loadPacket(packet.dir),
    (e: unknown) =>
      e instanceof UsageError &&
      /Invalid packet file ".*": ".*\/prompts" is not a directory/.test(
        e.message,
      ),
  );
  await Deno.remove(join(packet.dir, "prompts"));
  await Deno.mkdir(join(packet.dir, "prompts", "01_x.prompt.md"), {
    recursive: true,
  });
  await assert.rejects(
    loadPacket(packet.dir),
    (e: unknown) =>
      e instanceof UsageError &&
      /Cannot read prompt file ".*01_x\.prompt\.md": it is not a regular file/
        .test(e.message),
  );
});
