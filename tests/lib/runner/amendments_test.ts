import assert from "node:assert/strict";
import { join } from "node:path";
import {
  amend,
  amendmentPhase,
  contract,
  relax,
} from "../../../lib/runner/amendments.ts";
import { runPacket } from "../../../lib/runner/mod.ts";
import {
  NotFoundError,
  type RunEvent,
  UsageError,
} from "../../../lib/shared/mod.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

const NOTES = promptFile(
  `# the front matter keeps its comments
verify:
  files_exist: [NOTES.md]   # the notes
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`,
  "Write the notes.\n\n---\n\nA rule that looks like front matter.\n",
);

Deno.test("amend() checks its entries against the clause's shape", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "contains",
      entries: ["NOTES.md"],
      reason: "r",
    }),
    (e: unknown) =>
      e instanceof UsageError &&
      /Invalid contains entry "NOTES.md"/.test(e.message),
  );
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "commands",
      entries: ["make test"],
      reason: "r",
    }),
    /never run through a shell/,
  );
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "files_exist",
      entries: [],
      reason: "r",
    }),
    /Name at least one files_exist entry/,
  );
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "files_exist",
      entries: [{ path: "x", repo: "nowhere" }],
      reason: "r",
    }),
    /unknown repo "nowhere"/,
  );
  await assert.rejects(
    amend(packet.dir, "9", {
      clause: "files_exist",
      entries: ["x"],
      reason: "r",
    }),
    NotFoundError,
  );
});

Deno.test("relax() with entries replaces a clause's entries", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const record = await relax(packet.dir, "1", {
    clause: "files_exist",
    entries: ["README.md"],
    reason: "the notes moved",
    confirm: true,
  });
  assert.equal(record.operation, "replace");
  assert.equal(record.direction, "relax");
  const view = await contract(packet.dir, "01");
  assert.deepEqual(view.enforced, { files_exist: ["README.md"] });
  assert.deepEqual(view.packet, { files_exist: ["NOTES.md"] });
  await assert.rejects(
    relax(packet.dir, "01", {
      clause: "files_exist",
      reason: "r",
      confirm: false,
    }),
    /needs confirmation/,
  );
});

Deno.test("amend() with persist rewrites only the verify key and keeps the file's mode", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  await Deno.chmod(file, 0o644);
  const before = await Deno.readTextFile(file);
  await amend(packet.dir, "01", {
    clause: "files_absent",
    entries: ["TODO.md"],
    reason: "r",
    persist: true,
  });
  const after = await Deno.readTextFile(file);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o644);
  assert.ok(after.startsWith("---\n# the front matter keeps its comments\n"));
  assert.match(
    after,
    /simulate: \{attempts: \[\{writes: \[\{path: NOTES\.md, text: done\}\]\}\]\}\n---\nWrite the notes\./,
  );
  assert.ok(after.endsWith(before.slice(before.indexOf("Write the notes."))));
  assert.match(
    after,
    /verify:\n {2}files_exist:\n {4}- NOTES\.md\n {2}files_absent:\n {4}- TODO\.md\n/,
  );
});

Deno.test("amend() with persist leaves the packet unchanged when the record cannot be written", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  const before = await Deno.readTextFile(file);
  await Deno.mkdir(packet.stateRoot);
  await Deno.writeTextFile(
    join(packet.stateRoot, "amendments"),
    "a file, not a directory",
  );
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "files_absent",
      entries: ["x"],
      reason: "r",
      persist: true,
    }),
  );
  assert.equal(await Deno.readTextFile(file), before);
});

Deno.test("amendmentPhase() follows the latest verification, whichever run made it", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{}, {}]}`),
    },
  });
  assert.equal(await amendmentPhase(packet.stateRoot, "01"), "pre_verify");
  await runPacket(packet.dir);
  assert.equal(await amendmentPhase(packet.stateRoot, "01"), "post_failure");
  await Deno.writeTextFile(join(packet.workspace, "NOTES.md"), "x");
  await runPacket(packet.dir);
  assert.equal(await amendmentPhase(packet.stateRoot, "01"), "post_success");
});

/** The [clause, label, status] of each item a run's verifications reported. */
function verified(events: RunEvent[]): string[][][] {
  return events.filter((e) => e.type === "verification_finished").map((e) =>
    (e.data.items as { clause: string; label: string; status: string }[])
      .map((i) => [i.clause, i.label, i.status])
  );
}

/** The [clause, label] of each entry of the contract `contract()` enforces. */
async function shown(dir: string, id: string): Promise<string[][]> {
  const view = await contract(dir, id);
  return view.diff.filter((d) => d.change !== "removed").map((d) => [
    d.clause,
    d.entry,
  ]);
}

Deno.test("a persisted amend made while the prompt runs is enforced by that attempt's verification", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify: {files_exist: [NOTES.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`),
    },
  });
  const events: RunEvent[] = [];
  const result = await runPacket(packet.dir, {
    onEvent: async (event) => {
      events.push(event);
      if (event.type === "prompt_started") {
        await amend(packet.dir, "01", {
          clause: "files_exist",
          entries: ["missing.md"],
          reason: "tightened mid-run",
          persist: true,
        });
      }
    },
  });
  assert.equal(result.status, "failed");
  assert.deepEqual(verified(events), [[
    ["files_exist", "NOTES.md", "pass"],
    ["files_exist", "missing.md", "fail"],
  ]]);
  assert.deepEqual(
    await shown(packet.dir, "01"),
    verified(events)[0]!.map(([clause, label]) => [clause, label]),
    "control contract shows the contract the run enforced",
  );
});

Deno.test("a persisted relax made while the prompt runs is enforced by that attempt's verification", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify:
  files_exist: [NOTES.md]
  commands: [{exec: "false"}]
recovery: {repair: {enabled: false}}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`),
    },
  });
  const events: RunEvent[] = [];
  const result = await runPacket(packet.dir, {
    onEvent: async (event) => {
      events.push(event);
      if (event.type === "prompt_started") {
        await relax(packet.dir, "01", {
          clause: "commands",
          reason: "the check is broken upstream",
          confirm: true,
          persist: true,
        });
      }
    },
  });
  assert.equal(result.status, "completed");
  assert.deepEqual(verified(events), [[["files_exist", "NOTES.md", "pass"]]]);
  assert.deepEqual(await shown(packet.dir, "01"), [[
    "files_exist",
    "NOTES.md",
  ]]);
});

Deno.test("a prompt file made invalid or removed mid-run is a verifier fault naming the file", async () => {
  for (
    const [what, spoil] of [
      [
        "invalid",
        (file: string) => Deno.writeTextFile(file, "---\nverify: [\n---\n"),
      ],
      ["removed", (file: string) => Deno.remove(file)],
    ] as const
  ) {
    await using packet = await makePacket({
      prompts: {
        "01_notes.prompt.md": promptFile(`verify: {files_exist: [NOTES.md]}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`),
      },
    });
    const file = join(packet.dir, "prompts", "01_notes.prompt.md");
    const result = await runPacket(packet.dir, {
      onEvent: async (event) => {
        if (event.type === "prompt_started") await spoil(file);
      },
    });
    assert.equal(result.status, "failed", what);
    assert.equal(result.prompts["01"]?.status, "verifier_fault", what);
    assert.ok(
      result.prompts["01"]?.reason?.startsWith("cannot verify: ") &&
        result.prompts["01"].reason.includes(`"${file}"`),
      `${what}: ${result.prompts["01"]?.reason}`,
    );
  }
});
