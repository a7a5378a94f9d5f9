import assert from "node:assert/strict";
import {
  checkEntry,
  CLAUSES,
  describeEntry,
  isClause,
  parseContract,
} from "../../../lib/packet/contract.ts";
import { UsageError } from "../../../lib/shared/errors.ts";

const FILE = "/packet/prompts/01_a.prompt.md";
const REPOS = ["app", "docs"];

/** Asserts parseContract() refuses `raw` and returns the error. */
function refused(raw: unknown, repos: string[] = REPOS): UsageError {
  try {
    parseContract(raw, FILE, repos);
  } catch (error) {
    assert.ok(error instanceof UsageError, `not a UsageError: ${error}`);
    assert.equal(error.exitCode, 2);
    return error;
  }
  assert.fail(`expected ${JSON.stringify(raw)} to be refused`);
}

/** The message parseContract() gives for one bad entry of `clause`. */
function entryProblem(clause: string, entry: unknown): string {
  const error = refused({ [clause]: [entry] });
  assert.equal(error.code, "INVALID_PACKET");
  const prefix = `Invalid verify entry ${clause}[0] in "${FILE}": `;
  assert.ok(error.message.startsWith(prefix), error.message);
  return error.message.slice(prefix.length);
}

/** The key parseContract() names for an unknown key of one `clause` entry, and its hint. */
function unknownKey(clause: string, entry: unknown): [string, string] {
  const error = refused({ [clause]: [entry] });
  assert.equal(error.code, "INVALID_PACKET");
  const prefix = `Invalid packet file "${FILE}": unknown key `;
  assert.ok(error.message.startsWith(prefix), error.message);
  return [error.message.slice(prefix.length), error.hint ?? ""];
}

Deno.test("CLAUSES lists the first-wave clauses in report order", () => {
  assert.deepEqual([...CLAUSES], [
    "files_exist",
    "files_absent",
    "contains",
    "matches",
    "commands",
    "changed_paths_only",
  ]);
  assert.equal(isClause("contains"), true);
  assert.equal(isClause("file_exists"), false);
  assert.equal(isClause("toString"), false);
});

Deno.test("parseContract() reads an absent or null contract as empty", () => {
  assert.deepEqual(parseContract(undefined, FILE, REPOS), {});
  assert.deepEqual(parseContract(null, FILE, REPOS), {});
  assert.deepEqual(parseContract({}, FILE, REPOS), {});
});

Deno.test("parseContract() returns every clause's entries unchanged, as lists", () => {
  const raw = {
    files_exist: ["a.md", { path: "b.md", repo: "docs" }],
    files_absent: ["tmp/"],
    contains: [{ path: "a.md", text: "hello" }],
    matches: [{ path: "a.md", pattern: "^v\\d+$", repo: "app" }],
    commands: [{
      exec: "deno",
      args: ["test"],
      timeout_ms: 60_000,
      cwd: "src",
      repo: "app",
      env: { CI: "1" },
      stdout_contains: "ok",
    }],
    changed_paths_only: ["src/", "docs:README.md"],
  };
  assert.deepEqual(parseContract(raw, FILE, REPOS), raw);
});

Deno.test("parseContract() wraps a single entry in a list", () => {
  assert.deepEqual(
    parseContract(
      { files_exist: "a.md", contains: { path: "a.md", text: "x" } },
      FILE,
      REPOS,
    ),
    { files_exist: ["a.md"], contains: [{ path: "a.md", text: "x" }] },
  );
});

Deno.test("parseContract() refuses a contract that is not a mapping and names the file", () => {
  for (const raw of [["files_exist"], "files_exist: [a]", 3]) {
    const error = refused(raw);
    assert.equal(error.code, "INVALID_PACKET");
    assert.equal(
      error.message,
      `Invalid verify contract in "${FILE}": expected a mapping of clauses`,
    );
  }
});

Deno.test("parseContract() refuses an unknown clause and lists the known ones", () => {
  const error = refused({ files_exist: ["a.md"], file_exists: ["b.md"] });
  assert.equal(error.code, "UNKNOWN_CLAUSE");
  assert.equal(
    error.message,
    `Unknown verify clause "file_exists" in "${FILE}": known clauses are files_exist, files_absent, contains, matches, commands, changed_paths_only`,
  );
});

Deno.test("parseContract() names the index of the bad entry", () => {
  const error = refused({ files_exist: ["a.md", "b.md", ""] });
  assert.equal(
    error.message,
    `Invalid verify entry files_exist[2] in "${FILE}": a path must be a non-empty string`,
  );
});

Deno.test("parseContract() refuses a bad path entry in each path clause", () => {
  for (const clause of ["files_exist", "files_absent", "changed_paths_only"]) {
    assert.equal(
      entryProblem(clause, "  "),
      "a path must be a non-empty string",
    );
    assert.equal(
      entryProblem(clause, 42),
      "an entry must be a path or {path, repo}",
    );
    assert.deepEqual(unknownKey(clause, { path: "a", text: "x" }), [
      `"verify.${clause}[0].text"`,
      `Known keys of verify.${clause}[0]: path, repo`,
    ]);
    assert.equal(
      entryProblem(clause, { repo: "app" }),
      "path must be a non-empty string",
    );
  }
});

Deno.test("parseContract() refuses an unknown repo and names the declared ones", () => {
  assert.equal(
    entryProblem("files_exist", { path: "a", repo: "web" }),
    'unknown repo "web" (the packet declares app, docs)',
  );
  const error = refused({ files_exist: [{ path: "a", repo: "web" }] }, []);
  assert.match(
    error.message,
    /unknown repo "web" \(the packet declares no repos\)$/,
  );
  assert.equal(
    entryProblem("commands", { exec: "true", repo: "web" }),
    'unknown repo "web" (the packet declares app, docs)',
  );
  assert.equal(
    entryProblem("files_exist", { path: "a", repo: "" }),
    "repo must be a non-empty string",
  );
});

Deno.test("parseContract() refuses a contains entry without a path or a text", () => {
  assert.equal(
    entryProblem("contains", "a.md"),
    "an entry must be {path, text}",
  );
  assert.equal(
    entryProblem("contains", { path: "a.md" }),
    "text must be a non-empty string",
  );
  assert.equal(
    entryProblem("contains", { path: "a.md", text: "" }),
    "text must be a non-empty string",
  );
  assert.equal(
    entryProblem("contains", { text: "x" }),
    "path must be a non-empty string",
  );
  assert.deepEqual(
    unknownKey("contains", { path: "a.md", text: "x", pattern: "y" }),
    [
      '"verify.contains[0].pattern"',
      "Known keys of verify.contains[0]: path, text, repo",
    ],
  );
});

Deno.test("parseContract() accepts a contains text that is only spaces", () => {
  assert.deepEqual(
    parseContract({ contains: [{ path: "a", text: "  " }] }, FILE, REPOS),
    { contains: [{ path: "a", text: "  " }] },
  );
});

Deno.test("parseContract() refuses an invalid regular expression and quotes it", () => {
  const problem = entryProblem("matches", { path: "a.md", pattern: "(" });
  assert.ok(
    problem.startsWith(
      'pattern "(" is not a valid regular expression: ',
    ),
    problem,
  );
});

Deno.test("parseContract() refuses a matches entry without a path or a pattern", () => {
  assert.equal(
    entryProblem("matches", "a.md"),
    "an entry must be {path, pattern}",
  );
  assert.equal(
    entryProblem("matches", { path: "a.md" }),
    "pattern must be a non-empty string",
  );
  assert.deepEqual(
    unknownKey("matches", { path: "a.md", pattern: "x", flags: "i" }),
    [
      '"verify.matches[0].flags"',
      "Known keys of verify.matches[0]: path, pattern, repo",
    ],
  );
});

Deno.test("parseContract() refuses a command given as a shell string", () => {
  assert.equal(
    entryProblem("commands", "deno test && echo ok"),
    'a command must be {exec, args}, not the shell string "deno test && echo ok": commands are never run through a shell',
  );
});

Deno.test("parseContract() refuses malformed command entries and names the field", () => {
  assert.equal(
    entryProblem("commands", ["deno", "test"]),
    "a command must be {exec, args}",
  );
  assert.equal(
    entryProblem("commands", { args: ["x"] }),
    "exec must be a non-empty string",
  );
  assert.equal(
    entryProblem("commands", { exec: "deno", args: "test" }),
    "args must be a list of strings",
  );
  assert.equal(
    entryProblem("commands", { exec: "deno", args: ["test", 1] }),
    "args must be a list of strings",
  );
  for (const timeout_ms of [0, -5, 1.5, "1000"]) {
    assert.equal(
      entryProblem("commands", { exec: "deno", timeout_ms }),
      "timeout_ms must be a positive integer",
    );
  }
  assert.equal(
    entryProblem("commands", { exec: "deno", cwd: "" }),
    "cwd must be a non-empty string",
  );
  assert.equal(
    entryProblem("commands", { exec: "deno", env: { CI: 1 } }),
    "env must be a mapping of strings",
  );
  assert.equal(
    entryProblem("commands", { exec: "deno", env: ["CI=1"] }),
    "env must be a mapping of strings",
  );
  assert.equal(
    entryProblem("commands", { exec: "deno", stdout_contains: 3 }),
    "stdout_contains must be a string",
  );
  assert.deepEqual(unknownKey("commands", { exec: "deno", shell: true }), [
    '"verify.commands[0].shell"',
    "Known keys of verify.commands[0]: exec, args, timeout_ms, cwd, repo, env, stdout_contains",
  ]);
  assert.deepEqual(unknownKey("commands", { exec: "deno", timout_ms: 5 }), [
    '"verify.commands[0].timout_ms"',
    'Did you mean "verify.commands[0].timeout_ms"? Known keys of verify.commands[0]: exec, args, timeout_ms, cwd, repo, env, stdout_contains',
  ]);
});

Deno.test("checkEntry() returns a good entry and throws a plain Error for a bad one", () => {
  const entry = { exec: "true" };
  assert.equal(checkEntry("commands", entry, []), entry);
  assert.throws(
    () => checkEntry("files_exist", "", []),
    (error: unknown) =>
      error instanceof Error && !(error instanceof UsageError) &&
      error.message === "a path must be a non-empty string",
  );
  // Amendments are checked entry by entry, without a file: the same keys.
  assert.throws(
    () => checkEntry("commands", { exec: "deno", shell: true }, []),
    (error: unknown) =>
      error instanceof Error && !(error instanceof UsageError) &&
      error.message ===
        'unknown key "shell" (expected exec, args, timeout_ms, cwd, repo, env, stdout_contains)',
  );
});

Deno.test("describeEntry() labels a path entry by its path", () => {
  assert.equal(describeEntry("src/a.md"), "src/a.md");
  assert.equal(describeEntry({ path: "src/a.md" }), "src/a.md");
  assert.equal(describeEntry({ path: "a.md", repo: "docs" }), "docs:a.md");
  assert.equal(describeEntry({ repo: "docs", path: "a.md" }), "docs:a.md");
});

Deno.test("describeEntry() labels other entries by their sorted key=value pairs", () => {
  assert.equal(
    describeEntry({ text: "hello world", path: "a.md" }),
    "path=a.md text=hello world",
  );
  assert.equal(
    describeEntry({ exec: "deno", args: ["test", "-A"], timeout_ms: 5 }),
    'args=["test","-A"] exec=deno timeout_ms=5',
  );
  assert.equal(describeEntry(42), "42");
  assert.equal(describeEntry(["a"]), '["a"]');
});

Deno.test("describeEntry() gives the same label whatever the key order", () => {
  assert.equal(
    describeEntry({ path: "a.md", pattern: "^x", repo: "app" }),
    describeEntry({ repo: "app", pattern: "^x", path: "a.md" }),
  );
});
