import assert from "node:assert/strict";
import { join } from "node:path";
import { amend, relax } from "../../../lib/contract/amend_contract.ts";
import { amendmentPhase } from "../../../lib/contract/amendment_phase.ts";
import { contract } from "../../../lib/contract/contract_view.ts";
import { runPacket } from "../../../lib/runner/mod.ts";
import {
  LinkRefusedError,
  NotFoundError,
  pathExists,
  type RunEvent,
  StateError,
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
  packet.audit = false; // amendments/ is a file, on purpose.
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

const SIX = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"];

/** The prompt file's own `verify.files_exist`, as a fresh load reads it. */
async function packetFiles(dir: string): Promise<string[]> {
  const view = await contract(dir, "01");
  return (view.packet.files_exist ?? []) as string[];
}

Deno.test("concurrent persisted amend() calls on one prompt all land in the prompt file, the records and the enforced contract", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  await Promise.all(SIX.map((path) =>
    amend(packet.dir, "01", {
      clause: "files_exist",
      entries: [path],
      reason: `needs ${path}`,
      persist: true,
    })
  ));
  assert.deepEqual(
    (await packetFiles(packet.dir)).toSorted(),
    ["NOTES.md", ...SIX],
    "the prompt file keeps every change",
  );
  const view = await contract(packet.dir, "01");
  assert.deepEqual(
    view.amendments.map((r) => r.entries[0]).toSorted(),
    SIX,
  );
  assert.ok(view.amendments.every((r) => r.persisted));
  assert.deepEqual(
    (view.enforced.files_exist as string[]).toSorted(),
    ["NOTES.md", ...SIX],
  );
  assert.deepEqual(
    view.amendments.map((r) => r.at),
    view.amendments.map((r) => r.at).toSorted(),
    "records are in the order they were made",
  );
});

Deno.test("persisted amendments from two state roots sharing a packet all land in the prompt file", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const roots = [join(packet.root, "ops-a"), join(packet.root, "ops-b")];
  await Promise.all(
    SIX.map((path, i) =>
      amend({ packet_dir: packet.dir, state_root: roots[i % 2]! }, "01", {
        clause: "files_exist",
        entries: [path],
        reason: `needs ${path}`,
        persist: true,
      })
    ),
  );
  assert.deepEqual(
    (await packetFiles(packet.dir)).toSorted(),
    ["NOTES.md", ...SIX],
  );
  for (const [i, root] of roots.entries()) {
    const view = await contract(
      { packet_dir: packet.dir, state_root: root },
      "01",
    );
    assert.deepEqual(
      view.amendments.map((r) => r.entries[0]).toSorted(),
      SIX.filter((_, j) => j % 2 === i),
    );
    assert.deepEqual(
      (view.enforced.files_exist as string[]).toSorted(),
      ["NOTES.md", ...SIX],
    );
  }
});

Deno.test("concurrent amend() and relax() calls, persisted or not, are all enforced", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  await Promise.all([
    ...SIX.map((path, i) =>
      amend(packet.dir, "01", {
        clause: "files_exist",
        entries: [path],
        reason: `needs ${path}`,
        persist: i % 2 === 0,
      })
    ),
    relax(packet.dir, "01", {
      clause: "commands",
      entries: [{ exec: "true" }],
      reason: "a check that runs",
      confirm: true,
      persist: true,
    }),
  ]);
  const view = await contract(packet.dir, "01");
  assert.deepEqual(
    (view.enforced.files_exist as string[]).toSorted(),
    ["NOTES.md", ...SIX],
  );
  assert.deepEqual(view.enforced.commands, [{ exec: "true" }]);
  assert.deepEqual(
    (await packetFiles(packet.dir)).toSorted(),
    ["NOTES.md", "a.md", "c.md", "e.md"],
  );
  assert.equal(view.amendments.length, 7);
});

Deno.test("amend() fails with a StateError and records nothing while another writer holds the lock past lockTimeoutMs", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  const before = await Deno.readTextFile(file);
  await amend(packet.dir, "01", {
    clause: "files_absent",
    entries: ["first.md"],
    reason: "first",
  });
  const lockPath = join(packet.stateRoot, "amendments", ".lock");
  assert.equal((await Deno.lstat(lockPath)).mode! & 0o777, 0o600);
  const records = await Deno.readTextFile(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  const log = await Deno.readTextFile(
    join(packet.stateRoot, "control", "log.jsonl"),
  );
  const holder = await Deno.open(lockPath, { read: true });
  try {
    assert.ok(await holder.tryLock(true));
    for (const persist of [false, true]) {
      await assert.rejects(
        amend(packet.dir, "01", {
          clause: "files_exist",
          entries: ["late.md"],
          reason: "late",
          persist,
          lockTimeoutMs: 200,
        }),
        (error: unknown) =>
          error instanceof StateError && error.exitCode === 4 &&
          error.code === "AMENDMENTS_LOCKED" &&
          error.message.includes(`"${lockPath}"`) &&
          /Nothing was recorded\. Try again/.test(error.hint ?? ""),
      );
    }
  } finally {
    holder.close();
  }
  assert.equal(await Deno.readTextFile(file), before);
  assert.equal(
    await Deno.readTextFile(join(packet.stateRoot, "amendments", "01.jsonl")),
    records,
  );
  assert.equal(
    await Deno.readTextFile(join(packet.stateRoot, "control", "log.jsonl")),
    log,
  );
  await amend(packet.dir, "01", {
    clause: "files_exist",
    entries: ["late.md"],
    reason: "once the holder let go",
    persist: true,
  });
  assert.deepEqual(await packetFiles(packet.dir), ["NOTES.md", "late.md"]);
});

Deno.test("amend() refuses an amendments lock that is a symbolic link and creates nothing where it points", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const target = join(packet.root, "planted");
  await Deno.mkdir(join(packet.stateRoot, "amendments"), { recursive: true });
  await Deno.symlink(target, join(packet.stateRoot, "amendments", ".lock"));
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "files_exist",
      entries: ["x.md"],
      reason: "r",
      persist: true,
    }),
    LinkRefusedError,
  );
  assert.equal(await pathExists(target), false);
  assert.equal(
    await pathExists(join(packet.stateRoot, "amendments", "01.jsonl")),
    false,
  );
  assert.deepEqual(await packetFiles(packet.dir), ["NOTES.md"]);
});

Deno.test("amend() with persist that cannot log leaves the prompt file and the amendments as they were", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  await amend(packet.dir, "01", {
    clause: "files_absent",
    entries: ["first.md"],
    reason: "first",
  });
  const before = await Deno.readTextFile(file);
  const amendments = join(packet.stateRoot, "amendments", "01.jsonl");
  const records = await Deno.readTextFile(amendments);
  const log = join(packet.stateRoot, "control", "log.jsonl");
  packet.audit = false; // The log is removed, on purpose.
  await Deno.remove(log);
  await Deno.mkdir(log);
  await assert.rejects(
    amend(packet.dir, "01", {
      clause: "files_exist",
      entries: ["x.md"],
      reason: "r",
      persist: true,
    }),
    (error: unknown) =>
      error instanceof StateError && error.code === "AMENDMENT_NOT_RECORDED" &&
      /^Nothing was recorded/.test(error.hint ?? ""),
  );
  assert.equal(await Deno.readTextFile(file), before);
  assert.equal(await Deno.readTextFile(amendments), records);
});

Deno.test("a persisted amendment undone because it cannot be recorded never undoes another state root's amendment", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const broken = join(packet.root, "ops-broken");
  const working = join(packet.root, "ops-working");
  // A log that cannot be appended to: every amendment there is undone.
  await Deno.mkdir(join(broken, "control", "log.jsonl"), { recursive: true });
  const results = await Promise.allSettled(SIX.map((path, i) =>
    amend(
      { packet_dir: packet.dir, state_root: i % 2 ? working : broken },
      "01",
      {
        clause: "files_exist",
        entries: [path],
        reason: `needs ${path}`,
        persist: true,
      },
    )
  ));
  assert.deepEqual(
    results.map((r) => r.status),
    SIX.map((_, i) => i % 2 ? "fulfilled" : "rejected"),
  );
  assert.deepEqual(
    (await packetFiles(packet.dir)).toSorted(),
    ["NOTES.md", "b.md", "d.md", "f.md"],
  );
});

Deno.test("amend() with persist fails with a StateError and records nothing while another state root's writer holds the prompt file", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const file = join(packet.dir, "prompts", "01_notes.prompt.md");
  const before = await Deno.readTextFile(file);
  const holder = await Deno.open(file, { read: true });
  try {
    assert.ok(await holder.tryLock(true));
    await assert.rejects(
      amend(packet.dir, "01", {
        clause: "files_exist",
        entries: ["late.md"],
        reason: "late",
        persist: true,
        lockTimeoutMs: 200,
      }),
      (error: unknown) =>
        error instanceof StateError && error.exitCode === 4 &&
        error.code === "PROMPT_FILE_LOCKED" &&
        error.message.includes(`"${file}"`) &&
        /^Nothing was recorded\. Try again/.test(error.hint ?? ""),
    );
  } finally {
    holder.close();
  }
  assert.equal(await Deno.readTextFile(file), before);
  assert.equal(
    await pathExists(join(packet.stateRoot, "amendments", "01.jsonl")),
    false,
  );
  assert.equal(
    await pathExists(join(packet.stateRoot, "control", "log.jsonl")),
    false,
  );
});
