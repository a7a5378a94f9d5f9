import assert from "node:assert/strict";
import { join } from "node:path";
import { CLAUSES, type Contract } from "../../../lib/packet/contract.ts";
import { loadPacket } from "../../../lib/packet/load_packet.ts";
import { verifyContract } from "../../../lib/verify/mod.ts";
import { summarizeItems } from "../../../lib/verify/report.ts";
import {
  makePacket,
  makeRepo,
  promptFile,
} from "../../_helpers/temp_packet.ts";

interface Workspace extends AsyncDisposable {
  /** A git work tree with README.md committed. */
  app: string;
}

async function workspace(): Promise<Workspace> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "prompt_runner_verify_" }),
  );
  const app = join(root, "app");
  await makeRepo(app, { "README.md": "# App\nhello\n" });
  return {
    app,
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("verifyContract() passes an empty contract with no items", async () => {
  await using ws = await workspace();
  const report = await verifyContract({}, { cwd: ws.app, repos: {} });
  assert.deepEqual(report, {
    passed: true,
    items: [],
    failures: 0,
    faults: 0,
  });
});

Deno.test("verifyContract() passes a contract whose clauses have no entries", async () => {
  await using ws = await workspace();
  const contract: Contract = {
    files_exist: [],
    files_absent: [],
    contains: [],
    matches: [],
    commands: [],
    changed_paths_only: [],
  };
  const report = await verifyContract(contract, { cwd: ws.app, repos: {} });
  assert.deepEqual(report, {
    passed: true,
    items: [],
    failures: 0,
    faults: 0,
  });
});

Deno.test("verifyContract() reports items in clause order, whatever the contract's key order", async () => {
  await using ws = await workspace();
  // Keys deliberately in reverse order.
  const contract: Contract = {
    changed_paths_only: ["NOTES.md"],
    commands: [{ exec: "true" }],
    matches: [{ path: "README.md", pattern: "^hello$" }],
    contains: [{ path: "README.md", text: "hello" }],
    files_absent: ["GONE.md"],
    files_exist: ["README.md"],
  };
  const report = await verifyContract(contract, {
    cwd: ws.app,
    repos: { app: ws.app },
  });
  assert.deepEqual(report.items.map((item) => item.clause), [...CLAUSES]);
  assert.deepEqual(
    report.items.map((item) => item.status),
    CLAUSES.map(() => "pass"),
  );
  assert.equal(report.passed, true);
});

Deno.test("verifyContract() keeps the entries of a clause in their written order", async () => {
  await using ws = await workspace();
  const report = await verifyContract(
    { files_exist: ["b.md", "README.md", "a.md"] },
    { cwd: ws.app, repos: {} },
  );
  assert.deepEqual(report.items.map((item) => item.label), [
    "b.md",
    "README.md",
    "a.md",
  ]);
});

Deno.test("verifyContract() counts failures and faults apart and fails the report", async () => {
  await using ws = await workspace();
  await Deno.symlink("loop", join(ws.app, "loop"));
  const report = await verifyContract(
    {
      files_exist: ["README.md", "MISSING.md", "loop/x"],
      contains: [{ path: "README.md", text: "absent text" }],
      commands: [{ exec: "prompt-runner-no-such-program" }],
    },
    { cwd: ws.app, repos: {} },
  );
  assert.deepEqual(report.items.map((item) => item.status), [
    "pass",
    "fail",
    "fault",
    "fail",
    "fault",
  ]);
  assert.equal(report.passed, false);
  assert.equal(report.failures, 2);
  assert.equal(report.faults, 2);
});

Deno.test("verifyContract() fails a report that has only a fault", async () => {
  await using ws = await workspace();
  const report = await verifyContract(
    { commands: [{ exec: "sleep", args: ["5"], timeout_ms: 200 }] },
    { cwd: ws.app, repos: {} },
  );
  assert.equal(report.passed, false);
  assert.equal(report.failures, 0);
  assert.equal(report.faults, 1);
});

Deno.test("verifyContract() gives every item a clause, a label, a status and a reason", async () => {
  await using ws = await workspace();
  const report = await verifyContract(
    {
      files_exist: ["README.md"],
      files_absent: ["README.md"],
      contains: [{ path: "README.md", text: "hello" }],
      matches: [{ path: "README.md", pattern: "nope" }],
      commands: [{ exec: "false" }],
      changed_paths_only: ["README.md"],
    },
    { cwd: ws.app, repos: { app: ws.app } },
  );
  assert.equal(report.items.length, 6);
  for (const item of report.items) {
    assert.ok(CLAUSES.includes(item.clause), item.clause);
    assert.equal(typeof item.label, "string");
    assert.ok(item.label.length > 0);
    assert.ok(["pass", "fail", "fault"].includes(item.status));
    assert.equal(typeof item.reason, "string");
    assert.ok(item.reason.length > 0);
    assert.equal(item.repo, "app");
  }
  assert.deepEqual(report.items.map((item) => item.status), [
    "pass",
    "fail",
    "pass",
    "fail",
    "fail",
    "pass",
  ]);
  assert.equal(report.failures, 3);
  assert.equal(report.faults, 0);
});

Deno.test("verifyContract() takes only the workspace as evidence", async () => {
  await using ws = await workspace();
  const contract: Contract = { files_exist: ["NOTES.md"] };
  const scope = { cwd: ws.app, repos: {} };
  assert.equal((await verifyContract(contract, scope)).passed, false);
  await Deno.writeTextFile(join(ws.app, "NOTES.md"), "now\n");
  assert.equal((await verifyContract(contract, scope)).passed, true);
});

Deno.test("verifyContract() checks a contract loaded from a packet in the prompt's repo", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(
        [
          "verify:",
          "  files_exist: [NOTES.md]",
          "  contains: [{path: NOTES.md, text: hello}]",
          "  changed_paths_only: [NOTES.md]",
        ].join("\n"),
      ),
    },
  });
  const loaded = await loadPacket(packet.dir);
  const prompt = loaded.prompts[0]!;
  const scope = {
    cwd: prompt.cwd,
    repos: Object.fromEntries(loaded.repos.map((r) => [r.name, r.path])),
  };
  const before = await verifyContract(prompt.verify, scope);
  assert.deepEqual(before.items.map((item) => item.status), [
    "fail",
    "fail",
    "pass",
  ]);
  await Deno.writeTextFile(join(prompt.cwd, "NOTES.md"), "hello\n");
  const after = await verifyContract(prompt.verify, scope);
  assert.equal(after.passed, true, JSON.stringify(after.items));
});

Deno.test("summarizeItems() passes only when nothing failed or faulted", () => {
  const item = (status: "pass" | "fail" | "fault") => ({
    clause: "files_exist" as const,
    label: "x",
    status,
    reason: status,
  });
  assert.deepEqual(summarizeItems([]), {
    passed: true,
    items: [],
    failures: 0,
    faults: 0,
  });
  assert.equal(summarizeItems([item("pass"), item("pass")]).passed, true);
  const mixed = summarizeItems([item("fail"), item("fault"), item("pass")]);
  assert.equal(mixed.passed, false);
  assert.equal(mixed.failures, 1);
  assert.equal(mixed.faults, 1);
  assert.equal(mixed.items.length, 3);
});
