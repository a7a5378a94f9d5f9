import assert from "node:assert/strict";
import { join } from "node:path";
import { checkContains, checkMatches } from "../../../lib/verify/content.ts";
import type { VerifyScope } from "../../../lib/verify/scope.ts";

interface Workspace extends AsyncDisposable {
  scope: VerifyScope;
}

/** A workspace with a README, a directory and a link loop. */
async function workspace(): Promise<Workspace> {
  const root = await Deno.makeTempDir({ prefix: "prompt_runner_content_" });
  const app = join(root, "app");
  const docs = join(root, "docs");
  await Deno.mkdir(join(app, "src"), { recursive: true });
  await Deno.mkdir(docs);
  await Deno.writeTextFile(
    join(app, "README.md"),
    "# Title\n\n## Usage\nRun `tool --help`.\nPrice: $5 (approx.)\n",
  );
  await Deno.writeTextFile(join(docs, "GUIDE.md"), "Guide v2\n");
  await Deno.symlink("loop", join(app, "loop"));
  return {
    scope: { cwd: app, repos: { app, docs } },
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("checkContains() passes when the file contains the text", async () => {
  await using ws = await workspace();
  const [item, ...rest] = await checkContains(
    [{ path: "README.md", text: "Run `tool --help`." }],
    ws.scope,
  );
  assert.equal(rest.length, 0);
  assert.equal(item?.clause, "contains");
  assert.equal(item?.status, "pass");
  assert.equal(item?.reason, "found");
  assert.equal(item?.repo, "app");
  assert.equal(item?.resolved_path, join(ws.scope.cwd, "README.md"));
  assert.equal(item?.label, 'README.md contains "Run `tool --help`."');
});

Deno.test("checkContains() matches the text literally, not as a pattern", async () => {
  await using ws = await workspace();
  const items = await checkContains(
    [
      { path: "README.md", text: "$5 (approx.)" },
      { path: "README.md", text: "Price: .5" },
    ],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => item.status), ["pass", "fail"]);
});

Deno.test("checkContains() fails when the file lacks the text and says so", async () => {
  await using ws = await workspace();
  const [item] = await checkContains(
    [{ path: "README.md", text: "Installation" }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(item?.reason, 'README.md does not contain "Installation"');
});

Deno.test("checkContains() is case-sensitive", async () => {
  await using ws = await workspace();
  const [item] = await checkContains(
    [{ path: "README.md", text: "usage" }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
});

Deno.test("checkContains() fails for a missing file and names its path", async () => {
  await using ws = await workspace();
  const [item] = await checkContains(
    [{ path: "NOTES.md", text: "x" }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(item?.reason, `missing file: ${join(ws.scope.cwd, "NOTES.md")}`);
});

Deno.test("checkContains() fails for a directory where a file is expected", async () => {
  await using ws = await workspace();
  const [item] = await checkContains([{ path: "src", text: "x" }], ws.scope);
  assert.equal(item?.status, "fail");
  assert.equal(item?.reason, `not a file: ${join(ws.scope.cwd, "src")}`);
});

Deno.test("checkContains() reports a fault when the file cannot be read", async () => {
  await using ws = await workspace();
  const [item] = await checkContains(
    [{ path: "loop/x", text: "x" }],
    ws.scope,
  );
  const path = join(ws.scope.cwd, "loop", "x");
  assert.equal(item?.status, "fault");
  assert.ok(
    item?.reason.startsWith(`cannot read ${path}: `),
    `unexpected reason: ${item?.reason}`,
  );
});

Deno.test({
  name:
    "checkContains() fails, not faults, when a parent of the path is a regular file",
  async fn(): Promise<void> {
    await using ws = await workspace();
    const [item] = await checkContains(
      [{ path: "README.md/x", text: "x" }],
      ws.scope,
    );
    assert.equal(item?.status, "fail");
  },
});

Deno.test("checkContains() reads an entry in its repo", async () => {
  await using ws = await workspace();
  const items = await checkContains(
    [
      { path: "GUIDE.md", text: "v2", repo: "docs" },
      { path: "docs:GUIDE.md", text: "v2" },
    ],
    ws.scope,
  );
  assert.equal(items[0]?.status, "pass");
  assert.equal(items[0]?.repo, "docs");
  assert.equal(items[0]?.label, 'docs:GUIDE.md contains "v2"');
  // An object entry's path is a path: no "repo:" prefix parsing.
  assert.equal(items[1]?.status, "fail");
  assert.equal(items[1]?.repo, "app");
});

Deno.test("checkContains() shortens a long text in its label and reason", async () => {
  await using ws = await workspace();
  const text = "x".repeat(100);
  const [item] = await checkContains([{ path: "README.md", text }], ws.scope);
  const short = JSON.stringify("x".repeat(77) + "...");
  assert.equal(item?.label, `README.md contains ${short}`);
  assert.equal(item?.reason, `README.md does not contain ${short}`);
});

Deno.test("checkMatches() passes when a line matches, with ^ and $ anchored per line", async () => {
  await using ws = await workspace();
  const [item, ...rest] = await checkMatches(
    [{ path: "README.md", pattern: "^## Usage$" }],
    ws.scope,
  );
  assert.equal(rest.length, 0);
  assert.equal(item?.clause, "matches");
  assert.equal(item?.status, "pass");
  assert.equal(item?.reason, "matched");
  assert.equal(item?.label, "README.md matches /^## Usage$/");
  assert.equal(item?.resolved_path, join(ws.scope.cwd, "README.md"));
  assert.equal(item?.repo, "app");
});

Deno.test("checkMatches() fails when nothing matches and names the pattern", async () => {
  await using ws = await workspace();
  const [item] = await checkMatches(
    [{ path: "README.md", pattern: "^## Install" }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(item?.reason, "README.md has no match for /^## Install/");
});

Deno.test("checkMatches() fails for a missing file or a directory", async () => {
  await using ws = await workspace();
  const items = await checkMatches(
    [{ path: "NOTES.md", pattern: "." }, { path: "src", pattern: "." }],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => item.status), ["fail", "fail"]);
  assert.equal(
    items[0]?.reason,
    `missing file: ${join(ws.scope.cwd, "NOTES.md")}`,
  );
  assert.equal(items[1]?.reason, `not a file: ${join(ws.scope.cwd, "src")}`);
});

Deno.test("checkMatches() reports a fault when the file cannot be read", async () => {
  await using ws = await workspace();
  const [item] = await checkMatches(
    [{ path: "loop/x", pattern: "." }],
    ws.scope,
  );
  assert.equal(item?.status, "fault");
  assert.ok(
    item?.reason.startsWith(`cannot read ${join(ws.scope.cwd, "loop", "x")}: `),
    `unexpected reason: ${item?.reason}`,
  );
});

Deno.test("checkMatches() reports a fault for an invalid pattern instead of throwing", async () => {
  await using ws = await workspace();
  const items = await checkMatches(
    [{ path: "README.md", pattern: "(" }, { path: "README.md", pattern: "#" }],
    ws.scope,
  );
  assert.equal(items[0]?.status, "fault");
  assert.match(items[0]?.reason ?? "", /^invalid pattern: /);
  assert.equal(items[1]?.status, "pass", "later entries are still checked");
});

Deno.test("checkMatches() checks an entry in its repo", async () => {
  await using ws = await workspace();
  const [item] = await checkMatches(
    [{ path: "GUIDE.md", pattern: "v\\d", repo: "docs" }],
    ws.scope,
  );
  assert.equal(item?.status, "pass");
  assert.equal(item?.repo, "docs");
  assert.equal(item?.resolved_path, join(ws.scope.repos.docs!, "GUIDE.md"));
});

Deno.test("checkContains() and checkMatches() return no items for no entries", async () => {
  await using ws = await workspace();
  assert.deepEqual(await checkContains([], ws.scope), []);
  assert.deepEqual(await checkMatches([], ws.scope), []);
});
