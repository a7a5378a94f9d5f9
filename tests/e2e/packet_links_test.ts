/**
 * A packet is read only inside its directory, by the runner and by the
 * control commands alike (issue 19, DESIGN §11): a prompt file, a
 * `prompts/` directory or a manifest that is a link is refused with exit 4
 * and a clear error naming the link, never followed, so `control contract`
 * shows nothing `control amend --persist` would refuse to write, and `run`
 * runs nothing the two refuse. The packet directory itself may be a link.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists } from "../../lib/shared/path_exists.ts";
import { runCli } from "../_helpers/run_cli.ts";
import {
  linkOutOfPacket,
  makePacket,
  promptFile,
} from "../_helpers/temp_packet.ts";

const NOTES = promptFile(`verify: {files_exist: [NOTES.md]}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`);

const REFUSED =
  /^error: Refused to use ".*": it is a link, and prompt_runner reads a packet's manifest, prompt directory and prompt files only inside the packet, never through a link\nhint: Put the file itself in the packet/;

const NAMES = {
  prompt: "a prompt file",
  prompts: "a prompts/ directory",
  manifest: "a manifest",
} as const;

for (const part of ["prompt", "prompts", "manifest"] as const) {
  Deno.test(`${NAMES[part]} that is a link out of the packet is refused by control contract, control amend --persist and run (exit 4), and nothing is written where it leads`, async () => {
    await using packet = await makePacket({
      prompts: { "01_notes.prompt.md": NOTES },
    });
    const { link, outside } = await linkOutOfPacket(packet, part);
    const before = await Deno.readTextFile(outside);
    // Named below the packet's real path, where it is read from.
    const named = link.replace(packet.dir, await Deno.realPath(packet.dir));
    const commands = [
      ["control", "contract", packet.dir, "01"],
      [
        "control",
        "amend",
        packet.dir,
        "01",
        "--add-file",
        "X.md",
        "--reason",
        "needed",
        "--persist",
      ],
      ["run", packet.dir],
    ];
    for (const args of commands) {
      const result = await runCli(args);
      assert.equal(result.code, 4, `${args[1]}: ${result.stderr}`);
      assert.equal(result.stdout, "", args[1]);
      assert.match(result.stderr, REFUSED, args[1]);
      assert.ok(result.stderr.startsWith(`error: Refused to use "${named}"`));
    }
    assert.equal(await Deno.readTextFile(outside), before);
    assert.ok((await Deno.lstat(link)).isSymlink, "the link was replaced");
    assert.equal(
      await pathExists(join(packet.stateRoot, "amendments", "01.jsonl")),
      false,
    );
    assert.equal(await pathExists(join(packet.stateRoot, "state.json")), false);
  });
}

Deno.test("a packet directory that is itself a link is read and amended through it: control contract and amend --persist work on the real files (exit 0)", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const link = join(packet.root, "linked");
  await Deno.symlink(packet.dir, link);
  const shown = await runCli(["control", "contract", link, "01", "--json"]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.deepEqual(JSON.parse(shown.stdout).packet, {
    files_exist: ["NOTES.md"],
  });
  const amended = await runCli([
    "control",
    "amend",
    link,
    "01",
    "--add-file",
    "X.md",
    "--reason",
    "needed",
    "--persist",
  ]);
  assert.equal(amended.code, 0, amended.stderr);
  assert.match(
    await Deno.readTextFile(join(packet.dir, "prompts", "01_notes.prompt.md")),
    /files_exist:\n {4}- NOTES\.md\n {4}- X\.md\n/,
  );
});
