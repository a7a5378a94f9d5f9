import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkFilesAbsent,
  checkFilesExist,
} from "../../../lib/verify/files.ts";
import type { VerifyScope } from "../../../lib/verify/scope.ts";

interface TempDir extends AsyncDisposable {
  path: string;
}

async function tempDir(): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix: "prompt_runner_files_" });
  return {
    path,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(path, { recursive: true });
    },
  };
}

/** A workspace with a file, a directory, a dangling link and a link loop. */
async function workspace(): Promise<TempDir & { scope: VerifyScope }> {
  const dir = await tempDir();
  const app = join(dir.path, "app");
  const docs = join(dir.path, "docs");
  await Deno.mkdir(join(app, "src"), { recursive: true });
  await Deno.mkdir(docs);
  await Deno.writeTextFile(join(app, "NOTES.md"), "notes\n");
  await Deno.writeTextFile(join(docs, "GUIDE.md"), "guide\n");
  await Deno.symlink("nowhere", join(app, "dangling"));
  await Deno.symlink("loop", join(app, "loop"));
  return Object.assign(dir, {
    scope: { cwd: app, repos: { app, docs } },
  });
}

Deno.test("checkFilesExist() passes for a file that exists", async () => {
  await using ws = await workspace();
  const [item, ...rest] = await checkFilesExist(["NOTES.md"], ws.scope);
  assert.equal(rest.length, 0);
  assert.equal(item?.status, "pass");
  assert.equal(item?.clause, "files_exist");
  assert.equal(item?.label, "NOTES.md");
  assert.equal(item?.repo, "app");
  assert.equal(item?.resolved_path, join(ws.scope.cwd, "NOTES.md"));
  assert.equal(item?.reason, "exists");
});

Deno.test("checkFilesExist() passes for a directory and for a dangling link", async () => {
  await using ws = await workspace();
  const items = await checkFilesExist(["src", "dangling"], ws.scope);
  assert.deepEqual(items.map((item) => item.status), ["pass", "pass"]);
});

Deno.test("checkFilesExist() fails for a missing path and names its resolved path", async () => {
  await using ws = await workspace();
  const [item] = await checkFilesExist(["MISSING.md"], ws.scope);
  const missing = join(ws.scope.cwd, "MISSING.md");
  assert.equal(item?.status, "fail");
  assert.equal(item?.resolved_path, missing);
  assert.equal(item?.reason, `missing: ${missing}`);
});

Deno.test("checkFilesExist() reports a fault when the path cannot be examined", async () => {
  await using ws = await workspace();
  const [item] = await checkFilesExist(["loop/x"], ws.scope);
  const path = join(ws.scope.cwd, "loop", "x");
  assert.equal(item?.status, "fault");
  assert.ok(
    item?.reason.startsWith(`cannot check ${path}: `),
    `unexpected reason: ${item?.reason}`,
  );
});

Deno.test({
  name:
    "checkFilesExist() fails, not faults, when a parent of the path is a regular file",
  async fn(): Promise<void> {
    await using ws = await workspace();
    const [item] = await checkFilesExist(["NOTES.md/x"], ws.scope);
    assert.equal(item?.status, "fail");
  },
});

Deno.test("checkFilesExist() checks every entry and keeps their order", async () => {
  await using ws = await workspace();
  const items = await checkFilesExist(
    ["MISSING.md", "NOTES.md", "loop/x"],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => [item.label, item.status]), [
    ["MISSING.md", "fail"],
    ["NOTES.md", "pass"],
    ["loop/x", "fault"],
  ]);
});

Deno.test("checkFilesExist() resolves repo:path and {path, repo} entries in that repo", async () => {
  await using ws = await workspace();
  const items = await checkFilesExist(
    ["docs:GUIDE.md", { path: "GUIDE.md", repo: "docs" }, "GUIDE.md"],
    ws.scope,
  );
  const guide = join(ws.scope.repos.docs!, "GUIDE.md");
  assert.deepEqual(
    items.map((item) => [item.label, item.repo, item.resolved_path]),
    [
      ["docs:GUIDE.md", "docs", guide],
      ["docs:GUIDE.md", "docs", guide],
      ["GUIDE.md", "app", join(ws.scope.cwd, "GUIDE.md")],
    ],
  );
  assert.deepEqual(items.map((item) => item.status), ["pass", "pass", "fail"]);
});

Deno.test("checkFilesExist() treats a prefix that names no repo as part of the path", async () => {
  await using ws = await workspace();
  const [item] = await checkFilesExist(["nope:NOTES.md"], ws.scope);
  assert.equal(item?.resolved_path, join(ws.scope.cwd, "nope:NOTES.md"));
  assert.equal(item?.status, "fail");
});

Deno.test("checkFilesExist() accepts an absolute path", async () => {
  await using ws = await workspace();
  const absolute = join(ws.scope.repos.docs!, "GUIDE.md");
  const [item] = await checkFilesExist([absolute], ws.scope);
  assert.equal(item?.status, "pass");
  assert.equal(item?.resolved_path, absolute);
  assert.equal(item?.repo, "app", "the repo is the scope's, not the path's");
});

Deno.test("checkFilesExist() leaves out repo when the scope is in no repo", async () => {
  await using dir = await tempDir();
  const [item] = await checkFilesExist(["x"], { cwd: dir.path, repos: {} });
  assert.equal(item?.status, "fail");
  assert.equal("repo" in item!, false);
});

Deno.test("checkFilesAbsent() passes for a path that does not exist", async () => {
  await using ws = await workspace();
  const [item, ...rest] = await checkFilesAbsent(["GONE.md"], ws.scope);
  assert.equal(rest.length, 0);
  assert.equal(item?.clause, "files_absent");
  assert.equal(item?.status, "pass");
  assert.equal(item?.reason, "absent");
  assert.equal(item?.resolved_path, join(ws.scope.cwd, "GONE.md"));
});

Deno.test("checkFilesAbsent() fails for a file, a directory or a dangling link that is present", async () => {
  await using ws = await workspace();
  const items = await checkFilesAbsent(
    ["NOTES.md", "src", "dangling", "docs:GUIDE.md"],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => item.status), [
    "fail",
    "fail",
    "fail",
    "fail",
  ]);
  assert.equal(
    items[0]?.reason,
    `present: ${join(ws.scope.cwd, "NOTES.md")}`,
  );
  assert.equal(items[3]?.repo, "docs");
});

Deno.test("checkFilesAbsent() reports a fault when the path cannot be examined", async () => {
  await using ws = await workspace();
  const [item] = await checkFilesAbsent(["loop/x"], ws.scope);
  const path = join(ws.scope.cwd, "loop", "x");
  assert.equal(item?.status, "fault");
  assert.ok(
    item?.reason.startsWith(`cannot check ${path}: `),
    `unexpected reason: ${item?.reason}`,
  );
});

Deno.test({
  name:
    "checkFilesAbsent() passes, not faults, when a parent of the path is a regular file",
  async fn(): Promise<void> {
    await using ws = await workspace();
    const [item] = await checkFilesAbsent(["NOTES.md/x"], ws.scope);
    assert.equal(item?.status, "pass");
  },
});

Deno.test("checkFilesExist() and checkFilesAbsent() return no items for no entries", async () => {
  await using ws = await workspace();
  assert.deepEqual(await checkFilesExist([], ws.scope), []);
  assert.deepEqual(await checkFilesAbsent([], ws.scope), []);
});
