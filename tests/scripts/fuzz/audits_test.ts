/**
 * The fuzzer's checks can fail: a plane that consumed a few bad request
 * files and met a planted link passes them, and each check fires on one
 * planted violation.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { checkLinks } from "../../../scripts/fuzz/audits/links.ts";
import {
  checkDropped,
  collectRecords,
} from "../../../scripts/fuzz/audits/requests.ts";
import {
  compareTrees,
  snapshotTree,
} from "../../../scripts/fuzz/audits/canary.ts";
import type { Dropped } from "../../../scripts/fuzz/state.ts";
import { Violations } from "../../../scripts/_harness/mod.ts";
import {
  listNames,
  makeControlRoot,
  promptStart,
} from "../../_helpers/plane.ts";

Deno.test("the fuzzer's checks pass what the plane did and fire on each planted violation", async (t) => {
  await using root = await makeControlRoot();
  const canary = join(root.dir, "canary");
  const saved = join(root.dir, "saved");
  await Deno.mkdir(join(canary, "dir"), { recursive: true });
  await Deno.mkdir(saved);
  await Deno.writeTextFile(join(canary, "secret.txt"), "canary\n");
  const before = await snapshotTree(canary);
  const plane = await root.open("r1");
  await plane.promptStarted(promptStart("01"));
  const { requests } = root.paths;
  const dropped: Dropped[] = [
    { name: "a-garbage.json", kind: "random bytes", at: 0 },
    { name: "b c.json", kind: "collide", at: 0 },
    { name: "b_c.json", kind: "collide", at: 0 },
    { name: "d-no-ext", kind: "no .json", at: 0 },
    { name: "e-link.json", kind: "symlink", at: 0 },
    { name: "f-valid.json", kind: "valid", at: 0 },
  ];
  for (const { name } of dropped.slice(0, 4)) {
    await Deno.writeTextFile(join(requests, name), "{ nope");
  }
  await Deno.symlink(join(canary, "secret.txt"), join(requests, "e-link.json"));
  await Deno.writeTextFile(
    join(requests, "f-valid.json"),
    JSON.stringify({
      v: 1,
      id: "f",
      command: "set_view",
      params: { diff: "full" },
      run_id: "r1",
      author: "t",
      issued_at: "",
    }),
  );
  // A link planted at the log, after moving the log away as the fuzzer does.
  await plane.boundary({ idle: true });
  await Deno.rename(root.paths.log, join(saved, "1-log.jsonl"));
  await Deno.symlink(join(canary, "secret.txt"), root.paths.log);
  const plants = [{ path: "control/log.jsonl", target: "secret.txt" }];
  await Deno.writeTextFile(join(requests, "g-late.json"), "[]");
  dropped.push({ name: "g-late.json", kind: "array", at: 0 });
  await plane.boundary({ idle: true });
  await plane.close("completed");

  const check = async (): Promise<Violations> => {
    const v = new Violations(100);
    const records = await collectRecords(root.stateRoot, saved);
    await checkDropped(requests, dropped, records, v);
    await checkLinks(root.stateRoot, plants, records.log, v);
    for (const problem of compareTrees(before, await snapshotTree(canary))) {
      v.add("canary unchanged", problem);
    }
    return v;
  };

  await t.step("what the plane did passes every check", async () => {
    const v = await check();
    assert.deepEqual(v.report(), []);
  });

  await t.step("a missing receipt fires 'one receipt'", async () => {
    const receipts = await listNames(root.paths.outcomes);
    const hashed = receipts.find((name) => name.startsWith("~"))!;
    assert.ok(hashed, `hashed receipt names: ${receipts}`);
    const aside = join(root.dir, "aside.json");
    await Deno.rename(join(root.paths.outcomes, hashed), aside);
    const v = await check();
    assert.equal(v.countOf("one receipt"), 1, v.report().join("\n"));
    await Deno.rename(aside, join(root.paths.outcomes, hashed));
  });

  await t.step(
    "a receipt found twice fires 'one receipt', unless the fuzzer moved one copy away",
    async () => {
      const copy = join(saved, "2-outcomes");
      await Deno.mkdir(copy);
      await Deno.copyFile(
        join(root.paths.outcomes, "a-garbage.json"),
        join(copy, "a-garbage.json"),
      );
      const v = new Violations();
      const records = await collectRecords(root.stateRoot, saved);
      const result = await checkDropped(requests, dropped, records, v);
      assert.deepEqual(v.report(), []);
      assert.equal(result.redecided, 1);
      records.receipts.get("a-garbage.json")!.forEach((r) => r.moved = false);
      await checkDropped(requests, dropped, records, v);
      assert.equal(v.countOf("one receipt"), 1, v.report().join("\n"));
      await Deno.remove(copy, { recursive: true });
    },
  );

  await t.step(
    "a second final log entry fires 'one final log entry'",
    async () => {
      const text = await Deno.readTextFile(root.paths.log);
      const line = text.split("\n").find((l) => l.includes('"g-late"'))!;
      await Deno.writeTextFile(root.paths.log, text + line + "\n");
      const v = await check();
      assert.equal(v.countOf("one final log entry"), 1, v.report().join("\n"));
      await Deno.writeTextFile(root.paths.log, text);
    },
  );

  await t.step(
    "a rejection without a reason fires 'rejection has a reason'",
    async () => {
      const text = await Deno.readTextFile(root.paths.log);
      await Deno.writeTextFile(
        root.paths.log,
        text.replace(/("request_id":"g-late".*"reason":)"[^"]*"/, "$1null"),
      );
      const v = await check();
      assert.equal(
        v.countOf("rejection has a reason"),
        1,
        v.report().join("\n"),
      );
      await Deno.writeTextFile(root.paths.log, text);
    },
  );

  await t.step(
    "a file left in requests/ fires 'requests removed'",
    async () => {
      await Deno.writeTextFile(join(requests, "b c.json"), "{}");
      const v = await check();
      assert.equal(v.countOf("requests removed"), 1, v.report().join("\n"));
      await Deno.remove(join(requests, "b c.json"));
    },
  );

  await t.step(
    "a link moved aside without its log entry, or not moved at all, fires 'links moved aside'",
    async () => {
      const text = await Deno.readTextFile(root.paths.log);
      await Deno.writeTextFile(
        root.paths.log,
        text.split("\n").filter((l) => !l.includes("link_refused")).join("\n"),
      );
      let v = await check();
      assert.equal(v.countOf("links moved aside"), 1, v.report().join("\n"));
      await Deno.writeTextFile(root.paths.log, text);
      v = new Violations();
      await checkLinks(
        root.stateRoot,
        [...plants, { path: "control/snapshot.json", target: "secret.txt" }],
        (await collectRecords(root.stateRoot, saved)).log,
        v,
      );
      assert.equal(v.countOf("links moved aside"), 1, v.report().join("\n"));
    },
  );

  await t.step(
    "a changed, touched, replaced or new canary file fires 'canary unchanged'",
    async () => {
      const secret = join(canary, "secret.txt");
      const changes: [string, () => Promise<void>][] = [
        ["content", () => Deno.writeTextFile(secret, "canary?\n")],
        ["mtime", () => Deno.utime(secret, 1, 1)],
        ["kind", async () => {
          await Deno.remove(secret);
          await Deno.symlink("/nowhere", secret);
        }],
        ["new", () => Deno.writeTextFile(join(canary, "dir", "x"), "")],
      ];
      for (const [what, change] of changes) {
        const clean = await snapshotTree(canary);
        await change();
        const problems = compareTrees(clean, await snapshotTree(canary));
        assert.ok(
          problems.some((p) => p.includes(what)),
          `${what}: ${problems.join("; ")}`,
        );
      }
    },
  );
});

Deno.test("checkDropped() leaves to its writer a file put in place after the last run's final status, and only that one", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("r1");
  await plane.promptStarted(promptStart("01"));
  await plane.close("completed");
  const closedAt = Date.now();
  // After the runner's last sweep: nobody decides it.
  await Deno.writeTextFile(join(root.paths.requests, "h-after.json"), "{}");
  const dropped: Dropped[] = [
    { name: "h-after.json", kind: "late", at: closedAt + 1 },
  ];
  const records = await collectRecords(root.stateRoot, join(root.dir, "x"));
  const late = new Violations();
  const result = await checkDropped(
    root.paths.requests,
    dropped,
    records,
    late,
    closedAt,
  );
  assert.deepEqual(late.report(), []);
  assert.equal(result.late, 1);
  // Put in place before the final status: the runner had to decide it.
  const v = new Violations();
  await checkDropped(root.paths.requests, dropped, records, v, closedAt + 2);
  assert.deepEqual(v.checks.sort(), [
    "one final log entry",
    "one receipt",
    "requests removed",
  ]);
});
