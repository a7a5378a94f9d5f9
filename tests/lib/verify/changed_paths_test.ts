import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkChangedPaths,
  readGitChanges,
} from "../../../lib/verify/changed_paths.ts";
import type { VerifyScope } from "../../../lib/verify/scope.ts";
import { git, makeRepo } from "../../_helpers/temp_packet.ts";

interface Workspace extends AsyncDisposable {
  /** The temporary directory holding everything. */
  root: string;
  /** The `app` repo (a git work tree, real path). */
  app: string;
  /** The `docs` repo (a git work tree, real path). */
  docs: string;
  /** A scope whose cwd is `app`. */
  scope: VerifyScope;
}

/** Two git work trees, `app` and `docs`, each with a committed seed. */
async function workspace(): Promise<Workspace> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "prompt_runner_changed_" }),
  );
  const app = join(root, "app");
  const docs = join(root, "docs");
  await makeRepo(app, {
    "README.md": "seed\n",
    "src/main.ts": "main\n",
    "old.md": "old\n",
  });
  await makeRepo(docs, { "GUIDE.md": "guide\n" });
  return {
    root,
    app,
    docs,
    scope: { cwd: app, repos: { app, docs } },
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

async function write(path: string, text: string): Promise<void> {
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, text);
}

Deno.test("readGitChanges() lists changed, deleted and untracked paths relative to the top", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "README.md"), "edited\n");
  await Deno.remove(join(ws.app, "old.md"));
  await write(join(ws.app, "NEW.md"), "new\n");
  const changes = await readGitChanges(join(ws.app, "src"));
  assert.ok(changes.ok, JSON.stringify(changes));
  assert.equal(changes.top, ws.app);
  assert.deepEqual(Object.keys(changes.changes).sort(), [
    "NEW.md",
    "README.md",
    "old.md",
  ]);
  assert.match(changes.changes["README.md"]!, /^ M:/);
  assert.match(changes.changes["NEW.md"]!, /^\?\?:/);
  assert.equal(changes.changes["old.md"], " D:gone");
});

Deno.test("readGitChanges() reports nothing for a clean work tree", async () => {
  await using ws = await workspace();
  const changes = await readGitChanges(ws.app);
  assert.deepEqual(changes, { ok: true, top: ws.app, changes: {} });
});

Deno.test("readGitChanges() lists each file of an untracked directory by its full path", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "newdir", "deep", "a.md"), "a\n");
  await write(join(ws.app, "newdir", "b.md"), "b\n");
  const changes = await readGitChanges(ws.app);
  assert.ok(changes.ok);
  assert.deepEqual(Object.keys(changes.changes).sort(), [
    "newdir/b.md",
    "newdir/deep/a.md",
  ]);
});

Deno.test("readGitChanges() keeps names with spaces and non-ASCII letters unquoted", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "my notes.md"), "x\n");
  await write(join(ws.app, "ünïcödé.md"), "x\n");
  const changes = await readGitChanges(ws.app);
  assert.ok(changes.ok);
  assert.deepEqual(Object.keys(changes.changes).sort(), [
    "my notes.md",
    "ünïcödé.md",
  ]);
});

Deno.test("readGitChanges() lists both paths of a staged rename", async () => {
  await using ws = await workspace();
  await git(ws.app, ["mv", "old.md", "renamed.md"]);
  const changes = await readGitChanges(ws.app);
  assert.ok(changes.ok);
  assert.match(changes.changes["renamed.md"]!, /^R/);
  assert.match(changes.changes["old.md"]!, /^R.*:source$/);
  assert.equal(Object.keys(changes.changes).length, 2);
});

Deno.test("readGitChanges() gives a new fingerprint when a changed file changes again", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "README.md"), "edited\n");
  const before = await readGitChanges(ws.app);
  await write(join(ws.app, "README.md"), "edited again, and longer\n");
  const after = await readGitChanges(ws.app);
  assert.ok(before.ok && after.ok);
  assert.notEqual(after.changes["README.md"], before.changes["README.md"]);
});

Deno.test("readGitChanges() returns an error for a directory outside any work tree", async () => {
  await using ws = await workspace();
  const plain = join(ws.root, "plain");
  await Deno.mkdir(plain);
  const changes = await readGitChanges(plain);
  assert.equal(changes.ok, false);
  assert.ok(!changes.ok);
  assert.ok(
    changes.error.startsWith(`cannot read git status of ${plain}: `),
    changes.error,
  );
});

Deno.test("checkChangedPaths() passes when every changed path is allowed", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "NOTES.md"), "notes\n");
  await write(join(ws.app, "README.md"), "edited\n");
  const [item, ...rest] = await checkChangedPaths(
    ["NOTES.md", "README.md"],
    ws.scope,
  );
  assert.equal(rest.length, 0);
  assert.equal(item?.clause, "changed_paths_only");
  assert.equal(item?.status, "pass");
  assert.equal(item?.label, "app");
  assert.equal(item?.repo, "app");
  assert.deepEqual(item?.changed_paths, ["NOTES.md", "README.md"]);
  assert.equal(item?.reason, "ok: 2 changed path(s), all allowed");
});

Deno.test("checkChangedPaths() passes when nothing changed", async () => {
  await using ws = await workspace();
  const [item] = await checkChangedPaths(["NOTES.md"], ws.scope);
  assert.equal(item?.status, "pass");
  assert.equal(item?.reason, "ok: nothing changed");
  assert.deepEqual(item?.changed_paths, []);
});

Deno.test("checkChangedPaths() fails and names each disallowed path", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "NOTES.md"), "notes\n");
  await write(join(ws.app, "README.md"), "edited\n");
  await Deno.remove(join(ws.app, "old.md"));
  const [item] = await checkChangedPaths(["NOTES.md"], ws.scope);
  assert.equal(item?.status, "fail");
  assert.equal(
    item?.reason,
    "disallowed: README.md, old.md (allowed: NOTES.md)",
  );
  assert.deepEqual(item?.changed_paths, ["NOTES.md", "README.md", "old.md"]);
});

Deno.test("checkChangedPaths() reports a fault when the directory is not a git work tree", async () => {
  await using ws = await workspace();
  const plain = join(ws.root, "plain");
  await Deno.mkdir(plain);
  const [item] = await checkChangedPaths(["NOTES.md"], {
    cwd: plain,
    repos: {},
  });
  assert.equal(item?.status, "fault");
  assert.equal(item?.label, plain);
  assert.equal("repo" in item!, false);
  assert.ok(
    item?.reason.startsWith(`cannot read git status of ${plain}: `),
    item?.reason,
  );
  assert.equal(item?.changed_paths, undefined);
});

Deno.test("checkChangedPaths() reports a fault when the directory does not exist", async () => {
  await using ws = await workspace();
  const gone = join(ws.root, "gone");
  const [item] = await checkChangedPaths(["x.md"], { cwd: gone, repos: {} });
  assert.equal(item?.status, "fault");
});

Deno.test("checkChangedPaths() ignores baseline paths while they stay unchanged", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "README.md"), "edited before the prompt\n");
  await write(join(ws.app, "scratch", "draft.md"), "draft\n");
  const before = await readGitChanges(ws.app);
  assert.ok(before.ok);
  const scope = { ...ws.scope, baseline: { [before.top]: before.changes } };
  await write(join(ws.app, "NOTES.md"), "notes\n");
  const [item] = await checkChangedPaths(["NOTES.md"], scope);
  assert.equal(item?.status, "pass", item?.reason);
  assert.deepEqual(item?.changed_paths, ["NOTES.md"]);
});

Deno.test("checkChangedPaths() reports a baseline path once it changes again", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "README.md"), "edited before the prompt\n");
  const before = await readGitChanges(ws.app);
  assert.ok(before.ok);
  const scope = { ...ws.scope, baseline: { [before.top]: before.changes } };
  await write(join(ws.app, "README.md"), "edited again by the prompt\n");
  const [item] = await checkChangedPaths(["NOTES.md"], scope);
  assert.equal(item?.status, "fail");
  assert.match(item?.reason ?? "", /^disallowed: README\.md /);
});

Deno.test("checkChangedPaths() reports a baseline path the prompt deleted", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "README.md"), "edited before the prompt\n");
  const before = await readGitChanges(ws.app);
  assert.ok(before.ok);
  const scope = { ...ws.scope, baseline: { [before.top]: before.changes } };
  await Deno.remove(join(ws.app, "README.md"));
  const [item] = await checkChangedPaths(["NOTES.md"], scope);
  assert.equal(item?.status, "fail");
  assert.deepEqual(item?.changed_paths, ["README.md"]);
});

Deno.test("checkChangedPaths() skips paths inside an ignored root", async () => {
  await using ws = await workspace();
  const state = join(ws.app, ".prompt_runner");
  await write(join(state, "runs", "r1", "state.json"), "{}\n");
  await write(join(ws.app, "NOTES.md"), "notes\n");
  const without = await checkChangedPaths(["NOTES.md"], ws.scope);
  assert.equal(without[0]?.status, "fail", "the state root is a change");
  const [item] = await checkChangedPaths(["NOTES.md"], {
    ...ws.scope,
    ignore: [state],
  });
  assert.equal(item?.status, "pass", item?.reason);
  assert.deepEqual(item?.changed_paths, ["NOTES.md"]);
});

Deno.test("checkChangedPaths() does not skip a sibling whose name extends an ignored root", async () => {
  await using ws = await workspace();
  await write(join(ws.app, ".prompt_runner_x", "a.md"), "a\n");
  const [item] = await checkChangedPaths(["NOTES.md"], {
    ...ws.scope,
    ignore: [join(ws.app, ".prompt_runner")],
  });
  assert.equal(item?.status, "fail");
  assert.deepEqual(item?.changed_paths, [".prompt_runner_x/a.md"]);
});

Deno.test("checkChangedPaths() reports a new file in an untracked directory by its full path", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "generated", "deep", "out.txt"), "x\n");
  const [item] = await checkChangedPaths(["NOTES.md"], ws.scope);
  assert.equal(item?.status, "fail");
  assert.deepEqual(item?.changed_paths, ["generated/deep/out.txt"]);
  assert.match(item?.reason ?? "", /^disallowed: generated\/deep\/out\.txt /);
});

Deno.test("checkChangedPaths() allows everything under a directory entry, with or without a slash", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "src", "main.ts"), "edited\n");
  await write(join(ws.app, "src", "lib", "new.ts"), "new\n");
  await write(join(ws.app, "docs", "a.md"), "a\n");
  const [item] = await checkChangedPaths(["src/", "docs"], ws.scope);
  assert.equal(item?.status, "pass", item?.reason);
  assert.deepEqual(item?.changed_paths, [
    "docs/a.md",
    "src/lib/new.ts",
    "src/main.ts",
  ]);
});

Deno.test("checkChangedPaths() does not let an entry allow a path that merely shares its prefix", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "src2", "x.ts"), "x\n");
  await write(join(ws.app, "NOTES.md.bak"), "x\n");
  const [item] = await checkChangedPaths(["src", "NOTES.md"], ws.scope);
  assert.equal(item?.status, "fail");
  assert.match(item?.reason ?? "", /^disallowed: NOTES\.md\.bak, src2\/x\.ts /);
});

Deno.test("checkChangedPaths() judges each repo against its own entries", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "NOTES.md"), "notes\n");
  await write(join(ws.docs, "GUIDE.md"), "edited\n");
  await write(join(ws.docs, "EXTRA.md"), "extra\n");
  const items = await checkChangedPaths(
    ["NOTES.md", "docs:GUIDE.md"],
    ws.scope,
  );
  assert.deepEqual(
    items.map((item) => [item.label, item.repo, item.status]),
    [["app", "app", "pass"], ["docs", "docs", "fail"]],
  );
  assert.equal(
    items[1]?.reason,
    "disallowed: EXTRA.md (allowed: GUIDE.md)",
  );
});

Deno.test("checkChangedPaths() leaves a repo no entry names unchecked", async () => {
  await using ws = await workspace();
  await write(join(ws.docs, "EXTRA.md"), "extra\n");
  const items = await checkChangedPaths(["NOTES.md"], ws.scope);
  assert.deepEqual(items.map((item) => item.label), ["app"]);
  assert.equal(items[0]?.status, "pass");
});

Deno.test("checkChangedPaths() merges string and {path, repo} entries for the same repo", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "A.md"), "a\n");
  await write(join(ws.app, "B.md"), "b\n");
  const items = await checkChangedPaths(
    ["A.md", { path: "B.md", repo: "app" }],
    ws.scope,
  );
  assert.equal(items.length, 1);
  assert.equal(items[0]?.status, "pass", items[0]?.reason);
});

Deno.test("checkChangedPaths() resolves entries from a cwd below the top of the work tree", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "src", "main.ts"), "edited\n");
  await write(join(ws.app, "README.md"), "edited\n");
  const [item] = await checkChangedPaths(["main.ts"], {
    cwd: join(ws.app, "src"),
    repos: {},
  });
  assert.equal(item?.status, "fail");
  assert.equal(
    item?.reason,
    "disallowed: README.md (allowed: src/main.ts)",
  );
});

Deno.test({
  name:
    "checkChangedPaths() allows the paths it names when the scope reaches the repo through a symlink",
  async fn(): Promise<void> {
    await using ws = await workspace();
    const link = join(ws.root, "app-link");
    await Deno.symlink(ws.app, link);
    await write(join(ws.app, "NOTES.md"), "notes\n");
    const [item] = await checkChangedPaths(["NOTES.md"], {
      cwd: link,
      repos: { app: link },
    });
    assert.equal(item?.status, "pass", item?.reason);
  },
});

Deno.test({
  name: "checkChangedPaths() skips an ignored root reached through a symlink",
  async fn(): Promise<void> {
    await using ws = await workspace();
    const link = join(ws.root, "app-link");
    await Deno.symlink(ws.app, link);
    await write(join(ws.app, ".prompt_runner", "state.json"), "{}\n");
    const [item] = await checkChangedPaths([{ path: "x", repo: "app" }], {
      cwd: ws.app,
      repos: { app: ws.app },
      ignore: [join(link, ".prompt_runner")],
    });
    assert.equal(item?.status, "pass", item?.reason);
  },
});

Deno.test({
  name: 'checkChangedPaths() lets "." allow every path of the work tree',
  async fn(): Promise<void> {
    await using ws = await workspace();
    await write(join(ws.app, "NOTES.md"), "notes\n");
    await write(join(ws.app, "src", "new.ts"), "new\n");
    const items = await checkChangedPaths(["."], ws.scope);
    assert.equal(items[0]?.status, "pass", items[0]?.reason);
  },
});

Deno.test("checkChangedPaths() returns no items for no entries", async () => {
  await using ws = await workspace();
  await write(join(ws.app, "NOTES.md"), "notes\n");
  assert.deepEqual(await checkChangedPaths([], ws.scope), []);
});
