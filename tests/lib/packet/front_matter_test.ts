import assert from "node:assert/strict";
import {
  parseFrontMatter,
  setFrontMatterKey,
} from "../../../lib/packet/front_matter.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import { ROOT } from "../../_helpers/run_cli.ts";

const FILE = "/packet/prompts/01_a.prompt.md";

/** Asserts `fn` throws an invalid-packet UsageError and returns its message. */
function usageError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof UsageError, `not a UsageError: ${error}`);
    assert.equal(error.exitCode, 2);
    assert.equal(error.code, "INVALID_PACKET");
    return error.message;
  }
  assert.fail("expected a UsageError");
}

Deno.test("parseFrontMatter() splits the attributes from the body", () => {
  const parsed = parseFrontMatter(
    '---\nid: "01"\nname: Notes\nverify:\n  files_exist: [a.md]\n---\n# Notes\n\nWrite them.\n',
    FILE,
  );
  assert.deepEqual(parsed, {
    attributes: { id: "01", name: "Notes", verify: { files_exist: ["a.md"] } },
    body: "# Notes\n\nWrite them.\n",
    present: true,
  });
});

Deno.test("parseFrontMatter() treats a file without an opening --- line as all body", () => {
  const text = "# Title\n---\nname: not front matter\n---\n";
  assert.deepEqual(parseFrontMatter(text, FILE), {
    attributes: {},
    body: text,
    present: false,
  });
  assert.deepEqual(parseFrontMatter("", FILE), {
    attributes: {},
    body: "",
    present: false,
  });
});

Deno.test("parseFrontMatter() does not take a --- that is not on the first line as an opening", () => {
  const text = "\n---\nname: a\n---\nbody\n";
  assert.equal(parseFrontMatter(text, FILE).present, false);
  assert.equal(parseFrontMatter(text, FILE).body, text);
});

Deno.test("parseFrontMatter() reads an empty block as no attributes", () => {
  assert.deepEqual(parseFrontMatter("---\n---\nbody", FILE), {
    attributes: {},
    body: "body",
    present: true,
  });
  assert.deepEqual(parseFrontMatter("---\n# only a comment\n---\n", FILE), {
    attributes: {},
    body: "",
    present: true,
  });
});

Deno.test("parseFrontMatter() accepts a closing --- at the end of the file", () => {
  assert.deepEqual(parseFrontMatter("---\nname: a\n---", FILE), {
    attributes: { name: "a" },
    body: "",
    present: true,
  });
});

Deno.test("parseFrontMatter() accepts CRLF lines, trailing blanks on --- and a BOM", () => {
  const crlf = parseFrontMatter("---\r\nname: a\r\n---\r\nbody\r\n", FILE);
  assert.deepEqual(crlf.attributes, { name: "a" });
  assert.equal(crlf.body, "body\r\n");
  const blanks = parseFrontMatter("--- \t\nname: a\n---  \nbody", FILE);
  assert.deepEqual(blanks.attributes, { name: "a" });
  assert.equal(blanks.body, "body");
  const bom = parseFrontMatter("\uFEFF---\nname: a\n---\nbody", FILE);
  assert.deepEqual(bom.attributes, { name: "a" });
  assert.equal(bom.body, "body");
});

Deno.test("parseFrontMatter() keeps --- lines of the body in the body", () => {
  const parsed = parseFrontMatter(
    "---\nname: a\n---\nabove\n---\nbelow\n",
    FILE,
  );
  assert.deepEqual(parsed.attributes, { name: "a" });
  assert.equal(parsed.body, "above\n---\nbelow\n");
});

Deno.test("parseFrontMatter() refuses an opening --- without a closing one and names the file", () => {
  const message = usageError(() =>
    parseFrontMatter("---\nname: a\nbody\n", FILE)
  );
  assert.equal(
    message,
    `Invalid front matter in "${FILE}": the opening --- line has no closing --- line`,
  );
});

Deno.test("parseFrontMatter() refuses invalid YAML and names the file and a line", () => {
  const message = usageError(() =>
    parseFrontMatter("---\nname: a\nverify: [unclosed\n---\nbody\n", FILE)
  );
  assert.ok(
    message.startsWith(`Invalid YAML front matter in "${FILE}": line `),
    message,
  );
  assert.match(message, /: line \d+: \S/);
  assert.ok(!message.includes("\n"), "one line, no code frame");
});

Deno.test("parseFrontMatter() refuses a key given twice", () => {
  const message = usageError(() =>
    parseFrontMatter("---\nname: a\nname: b\n---\n", FILE)
  );
  assert.match(message, /Map keys must be unique/);
});

Deno.test({
  name: "parseFrontMatter() names the line of the file where the YAML error is",
  fn(): void {
    const message = usageError(() =>
      parseFrontMatter("---\nname: a\nname: b\n---\nbody\n", FILE)
    );
    assert.match(message, /: line 3: /);
  },
});

Deno.test("parseFrontMatter() refuses a front matter that is a list, naming the file", () => {
  const message = usageError(() =>
    parseFrontMatter("---\n- a\n- b\n---\nbody\n", FILE)
  );
  assert.equal(
    message,
    `Invalid front matter in "${FILE}": expected a mapping of keys, found a list`,
  );
});

Deno.test("parseFrontMatter() refuses a front matter that is a scalar", () => {
  assert.match(
    usageError(() => parseFrontMatter("---\nhello\n---\n", FILE)),
    /expected a mapping of keys, found a string$/,
  );
  assert.match(
    usageError(() => parseFrontMatter("---\n42\n---\n", FILE)),
    /expected a mapping of keys, found a number$/,
  );
});

Deno.test("setFrontMatterKey() adds a key and keeps the body byte for byte", () => {
  const body = "# Title\r\n\r\n---\nnot front matter: true\n  trailing  \t\n\n";
  const text = `---\nid: "01"\nname: Notes\n---\n${body}`;
  const updated = setFrontMatterKey(text, "model", "opus", FILE);
  assert.ok(updated.endsWith(`\n---\n${body}`), JSON.stringify(updated));
  assert.equal(updated.slice(updated.length - body.length), body);
  const parsed = parseFrontMatter(updated, FILE);
  assert.deepEqual(parsed.attributes, {
    id: "01",
    name: "Notes",
    model: "opus",
  });
  assert.equal(parsed.body, body);
});

Deno.test("setFrontMatterKey() keeps a body without a final newline", () => {
  const updated = setFrontMatterKey(
    "---\nname: a\n---\nno newline",
    "name",
    "b",
    FILE,
  );
  assert.equal(updated, "---\nname: b\n---\nno newline");
});

Deno.test("setFrontMatterKey() replaces a key in place and keeps the others and their comments", () => {
  const text = [
    "---",
    "# The prompt's id.",
    'id: "01"',
    "name: Old",
    "phase: 2 # inline",
    "---",
    "Body.",
    "",
  ].join("\n");
  const updated = setFrontMatterKey(text, "name", "New", FILE);
  assert.equal(
    updated,
    [
      "---",
      "# The prompt's id.",
      'id: "01"',
      "name: New",
      "phase: 2 # inline",
      "---",
      "Body.",
      "",
    ].join("\n"),
  );
});

Deno.test("setFrontMatterKey() sets a structured value that reads back equal", () => {
  const verify = {
    files_exist: ["a.md", { path: "b.md", repo: "docs" }],
    commands: [{ exec: "deno", args: ["test", "-A"] }],
  };
  const updated = setFrontMatterKey(
    "---\nname: a\n---\nBody\n",
    "verify",
    verify,
    FILE,
  );
  const parsed = parseFrontMatter(updated, FILE);
  assert.deepEqual(parsed.attributes, { name: "a", verify });
  assert.equal(parsed.body, "Body\n");
});

Deno.test("setFrontMatterKey() removes a key given undefined", () => {
  assert.equal(
    setFrontMatterKey(
      "---\nname: a\nmodel: x\n---\nBody\n",
      "model",
      undefined,
      FILE,
    ),
    "---\nname: a\n---\nBody\n",
  );
});

Deno.test("setFrontMatterKey() leaves an empty block when it removes the last key", () => {
  const updated = setFrontMatterKey(
    "---\nname: a\n---\nBody\n",
    "name",
    undefined,
    FILE,
  );
  assert.equal(updated, "---\n---\nBody\n");
  assert.deepEqual(parseFrontMatter(updated, FILE), {
    attributes: {},
    body: "Body\n",
    present: true,
  });
});

Deno.test("setFrontMatterKey() adds a key to an empty block", () => {
  assert.equal(
    setFrontMatterKey("---\n---\nBody\n", "name", "a", FILE),
    "---\nname: a\n---\nBody\n",
  );
});

Deno.test({
  name:
    "setFrontMatterKey() leaves an empty block as it is when removing a key",
  fn(): void {
    const text = "---\n---\nBody\n";
    assert.equal(setFrontMatterKey(text, "model", undefined, FILE), text);
  },
});

Deno.test("setFrontMatterKey() keeps a byte order mark and the trailing blanks of the --- lines", () => {
  const updated = setFrontMatterKey(
    "\uFEFF--- \nname: a\n---\t\nBody\n",
    "model",
    "x",
    FILE,
  );
  assert.equal(updated, "\uFEFF--- \nname: a\nmodel: x\n---\t\nBody\n");
});

Deno.test({
  name: "setFrontMatterKey() keeps the other keys as written",
  fn(): void {
    const text = "---\nverify:\n  files_exist: [a.md, {path: b.md}]\n---\nB\n";
    assert.equal(
      setFrontMatterKey(text, "model", "x", FILE),
      "---\nverify:\n  files_exist: [a.md, {path: b.md}]\nmodel: x\n---\nB\n",
    );
  },
});

Deno.test({
  name: "setFrontMatterKey() keeps CRLF line endings in a CRLF front matter",
  fn(): void {
    assert.equal(
      setFrontMatterKey("---\r\nname: a\r\n---\r\nB\r\n", "model", "x", FILE),
      "---\r\nname: a\r\nmodel: x\r\n---\r\nB\r\n",
    );
  },
});

Deno.test("setFrontMatterKey() refuses a file without front matter and names it", () => {
  assert.equal(
    usageError(() => setFrontMatterKey("Just a body\n", "name", "a", FILE)),
    `Cannot edit "${FILE}": it has no front matter`,
  );
  assert.equal(
    usageError(() => setFrontMatterKey("---\nname: a\n", "name", "b", FILE)),
    `Cannot edit "${FILE}": it has no front matter`,
  );
});

async function parseInChild(
  permissions: string[],
): Promise<Deno.CommandOutput> {
  const script = [
    'import { parseFrontMatter } from "./lib/packet/front_matter.ts";',
    'const parsed = parseFrontMatter("---\\nname: a\\n---\\nb", "f");',
    "console.log(JSON.stringify(parsed.attributes));",
  ].join("\n");
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--no-prompt", ...permissions, "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  return await child.output();
}

Deno.test("parseFrontMatter() needs only the YAML parser's two env switches", async () => {
  // The yaml package reads LOG_TOKENS and LOG_STREAM while parsing.
  const output = await parseInChild([
    "--allow-read",
    "--allow-env=LOG_TOKENS,LOG_STREAM",
  ]);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.equal(output.code, 0, stderr);
  assert.equal(new TextDecoder().decode(output.stdout), '{"name":"a"}\n');
});

Deno.test("parseFrontMatter() does not blame the file when a permission is missing", async () => {
  const output = await parseInChild(["--allow-read"]);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.notEqual(output.code, 0);
  assert.match(stderr, /NotCapable: Requires env access to "LOG_TOKENS"/);
  assert.doesNotMatch(stderr, /Invalid YAML front matter/);
});
