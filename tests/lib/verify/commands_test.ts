import assert from "node:assert/strict";
import { join } from "node:path";
import { checkCommands } from "../../../lib/verify/commands.ts";
import type { VerifyScope } from "../../../lib/verify/scope.ts";
import { writeExecutable } from "../../_helpers/executable.ts";

interface Workspace extends AsyncDisposable {
  scope: VerifyScope;
}

/** Two repos: `app` (the scope's cwd, with a script) and `docs`. */
async function workspace(): Promise<Workspace> {
  const root = await Deno.makeTempDir({ prefix: "prompt_runner_commands_" });
  const app = join(root, "app");
  const docs = join(root, "docs");
  await Deno.mkdir(join(app, "bin"), { recursive: true });
  await Deno.mkdir(join(docs, "sub"), { recursive: true });
  await writeExecutable(
    join(app, "bin", "ok.sh"),
    "#!/bin/sh\necho script ran\n",
  );
  await Deno.writeTextFile(join(app, "notes.txt"), "not a program\n");
  return {
    scope: { cwd: app, repos: { app, docs } },
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("checkCommands() passes a command that exits 0 and keeps its output", async () => {
  await using ws = await workspace();
  const [item, ...rest] = await checkCommands(
    [{ exec: "sh", args: ["-c", "echo all good"] }],
    ws.scope,
  );
  assert.equal(rest.length, 0);
  assert.equal(item?.clause, "commands");
  assert.equal(item?.status, "pass");
  assert.equal(item?.reason, "exited 0");
  assert.equal(item?.exit_code, 0);
  assert.equal(item?.output, "all good");
  assert.deepEqual(item?.argv, ["sh", "-c", "echo all good"]);
  assert.equal(item?.label, "sh -c 'echo all good'");
  assert.equal(item?.repo, "app");
});

Deno.test("checkCommands() fails a command that exits non-zero and quotes its output", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{
      exec: "sh",
      args: ["-c", "echo 2 tests failed; echo oops >&2; exit 3"],
    }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(item?.exit_code, 3);
  assert.match(item?.reason ?? "", /^exited with code 3: /);
  assert.ok(item?.reason.includes("2 tests failed"), item?.reason);
  assert.ok(item?.reason.includes("oops"), "stderr is part of the reason");
  assert.ok(item?.output?.includes("2 tests failed"));
});

Deno.test("checkCommands() fails a silent non-zero exit with just its code", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands([{ exec: "false" }], ws.scope);
  assert.equal(item?.status, "fail");
  assert.equal(item?.exit_code, 1);
  assert.equal(item?.reason, "exited with code 1");
});

Deno.test("checkCommands() reports a fault when the program is not on PATH", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "prompt-runner-no-such-program", args: ["--version"] }],
    ws.scope,
  );
  assert.equal(item?.status, "fault");
  assert.equal(
    item?.reason,
    "cannot run: prompt-runner-no-such-program not found on PATH",
  );
  assert.equal(item?.exit_code, undefined);
});

Deno.test("checkCommands() reports a fault when the command times out", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "sleep", args: ["5"], timeout_ms: 200 }],
    ws.scope,
  );
  assert.equal(item?.status, "fault");
  assert.equal(item?.reason, "timed out after 200 ms");
  assert.equal(item?.exit_code, undefined);
});

Deno.test("checkCommands() fails, not faults, when a relative program path does not exist", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "./build/tool", args: ["--check"] }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(
    item?.reason,
    `program ./build/tool does not exist in ${ws.scope.cwd}`,
  );
});

Deno.test("checkCommands() runs a relative program path from the command's cwd", async () => {
  await using ws = await workspace();
  const items = await checkCommands(
    [{ exec: "./bin/ok.sh" }, { exec: "./ok.sh", cwd: "bin" }],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => item.status), ["pass", "pass"]);
  assert.equal(items[0]?.output, "script ran");
});

Deno.test("checkCommands() reports a fault when the program exists but cannot be executed", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands([{ exec: "./notes.txt" }], ws.scope);
  assert.equal(item?.status, "fault");
  assert.match(item?.reason ?? "", /^cannot run \.\/notes\.txt: /);
});

Deno.test("checkCommands() reports a fault when the working directory does not exist", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "true", cwd: "no/such/dir" }],
    ws.scope,
  );
  assert.equal(item?.status, "fault");
  assert.equal(
    item?.reason,
    `cannot run: working directory ${
      join(ws.scope.cwd, "no/such/dir")
    } does not exist`,
  );
});

Deno.test("checkCommands() reports a fault when the working directory is a file", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "true", cwd: "notes.txt" }],
    ws.scope,
  );
  assert.equal(item?.status, "fault");
});

Deno.test("checkCommands() runs in the scope's cwd by default, in cwd relative to it, or in a repo", async () => {
  await using ws = await workspace();
  const docs = ws.scope.repos.docs!;
  const items = await checkCommands(
    [
      { exec: "pwd" },
      { exec: "pwd", cwd: "bin" },
      { exec: "pwd", repo: "docs" },
      { exec: "pwd", repo: "docs", cwd: "sub" },
    ],
    ws.scope,
  );
  const realApp = await Deno.realPath(ws.scope.cwd);
  const realDocs = await Deno.realPath(docs);
  assert.deepEqual(items.map((item) => [item.output, item.repo]), [
    [realApp, "app"],
    [join(realApp, "bin"), "app"],
    [realDocs, "docs"],
    [join(realDocs, "sub"), "docs"],
  ]);
});

Deno.test("checkCommands() passes when the output contains stdout_contains", async () => {
  await using ws = await workspace();
  const items = await checkCommands(
    [
      { exec: "sh", args: ["-c", "echo 12 passed"], stdout_contains: "passed" },
      {
        exec: "sh",
        args: ["-c", "echo 12 passed >&2"],
        stdout_contains: "12 passed",
      },
    ],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => item.status), ["pass", "pass"]);
});

Deno.test("checkCommands() fails an exit 0 whose output lacks stdout_contains", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "sh", args: ["-c", "echo 0 tests"], stdout_contains: "passed" }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.equal(item?.exit_code, 0);
  assert.equal(item?.reason, 'output does not contain "passed"');
  assert.equal(item?.output, "0 tests");
});

Deno.test("checkCommands() passes env to the command", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{
      exec: "sh",
      args: ["-c", 'test "$PR_TEST_FLAG" = on'],
      env: { PR_TEST_FLAG: "on" },
    }],
    ws.scope,
  );
  assert.equal(item?.status, "pass");
});

Deno.test("checkCommands() never runs its argv through a shell", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{ exec: "echo", args: ["$HOME", "a;b", "*"] }],
    ws.scope,
  );
  assert.equal(item?.status, "pass");
  assert.equal(item?.output, "$HOME a;b *");
  assert.equal(item?.label, "echo '$HOME' 'a;b' '*'");
});

Deno.test("checkCommands() caps the output quoted in a failure", async () => {
  await using ws = await workspace();
  const [item] = await checkCommands(
    [{
      exec: "sh",
      args: [
        "-c",
        "i=0; while [ $i -lt 2000 ]; do echo line-$i; i=$((i+1)); done; exit 1",
      ],
    }],
    ws.scope,
  );
  assert.equal(item?.status, "fail");
  assert.match(item?.output ?? "", /^\[truncated: \d+ earlier characters\]\n/);
  assert.ok(item?.output?.endsWith("line-1999"), "keeps the tail");
  assert.ok(!item?.output?.includes("line-0\n"), "drops the head");
});

Deno.test("checkCommands() runs every command in order, whatever the earlier outcome", async () => {
  await using ws = await workspace();
  const items = await checkCommands(
    [{ exec: "false" }, { exec: "prompt-runner-no-such-program" }, {
      exec: "true",
    }],
    ws.scope,
  );
  assert.deepEqual(items.map((item) => [item.label, item.status]), [
    ["false", "fail"],
    ["prompt-runner-no-such-program", "fault"],
    ["true", "pass"],
  ]);
});

Deno.test("checkCommands() returns no items for no entries", async () => {
  await using ws = await workspace();
  assert.deepEqual(await checkCommands([], ws.scope), []);
});
