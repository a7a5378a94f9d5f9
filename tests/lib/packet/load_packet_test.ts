import assert from "node:assert/strict";
import { join, resolve } from "node:path";
import { DEFAULT_AGENT_OPTIONS } from "../../../lib/packet/agent_options.ts";
import {
  loadPacket,
  MANIFEST_FILE,
  normalizePromptId,
  type Packet,
} from "../../../lib/packet/load_packet.ts";
import { DEFAULT_RECOVERY } from "../../../lib/packet/recovery.ts";
import {
  NotFoundError,
  type PromptRunnerError,
  UsageError,
} from "../../../lib/shared/errors.ts";
import { DEFAULT_VIEW } from "../../../lib/shared/view.ts";
import {
  makePacket,
  promptFile,
  type TempPacket,
} from "../../_helpers/temp_packet.ts";

const PROMPT = promptFile("name: First");

/** Replaces the packet's manifest with these front matter lines. */
async function writeManifest(
  packet: TempPacket,
  frontMatter: string,
): Promise<void> {
  await Deno.writeTextFile(
    join(packet.dir, MANIFEST_FILE),
    `---\n${frontMatter.trim()}\n---\nNotes.\n`,
  );
}

/** Loads a packet and asserts it is refused with `type`; returns the error. */
async function refused(
  dir: string,
  type: typeof UsageError | typeof NotFoundError = UsageError,
): Promise<PromptRunnerError> {
  try {
    await loadPacket(dir);
  } catch (error) {
    assert.ok(error instanceof type, `not a ${type.name}: ${error}`);
    return error;
  }
  assert.fail("expected the packet to be refused");
}

/** Loads a packet with one prompt file and asserts it is refused. */
async function refusedPrompt(
  name: string,
  text: string,
  manifest?: string,
): Promise<{ message: string; code: string; file: string }> {
  await using packet = await makePacket({
    prompts: { [name]: text },
    git: false,
    ...(manifest === undefined ? {} : { manifest }),
  });
  const error = await refused(packet.dir);
  assert.equal(error.exitCode, 2);
  const file = join(await Deno.realPath(packet.dir), "prompts", name);
  return { message: error.message, code: error.code, file };
}

Deno.test("loadPacket() loads the manifest, its repos and its prompts", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_first.prompt.md": promptFile(
        "name: First\nverify:\n  files_exist: [NOTES.md]",
        "Write NOTES.md.\n",
      ),
    },
  });
  const loaded = await loadPacket(packet.dir);
  const dir = await Deno.realPath(packet.dir);
  const workspace = await Deno.realPath(packet.workspace);
  assert.equal(loaded.dir, dir);
  assert.equal(loaded.manifest_file, join(dir, MANIFEST_FILE));
  assert.equal(loaded.name, "test-packet");
  assert.equal(loaded.provider, "simulated");
  assert.equal(loaded.model, null);
  assert.deepEqual(loaded.repos, [
    { name: "app", path: workspace, default: true },
  ]);
  assert.deepEqual(loaded.warnings, []);
  assert.equal(loaded.prompts.length, 1);
  const prompt = loaded.prompts[0]!;
  assert.deepEqual(prompt, {
    id: "01",
    name: "First",
    phase: 1,
    file: join(dir, "prompts", "01_first.prompt.md"),
    targets: [],
    depends_on: [],
    verify: { files_exist: ["NOTES.md"] },
    simulate: null,
    provider: "simulated",
    model: null,
    recovery: {
      ...DEFAULT_RECOVERY,
      retry: { ...DEFAULT_RECOVERY.retry, base_delay_ms: 0, max_delay_ms: 0 },
    },
    agent: DEFAULT_AGENT_OPTIONS,
    timeout_ms: null,
    progress_timeout_ms: null,
    budget: null,
    cwd: workspace,
    body: "Write NOTES.md.\n",
  });
});

Deno.test("loadPacket() gives the agent only the body after the front matter", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md":
        "---\nname: A\nmodel: secret-model\n---\n# Task\n\n---\nDo it.\n",
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.prompts[0]?.body, "# Task\n\n---\nDo it.\n");
});

Deno.test("loadPacket() loads a prompt without front matter as all body", async () => {
  await using packet = await makePacket({
    prompts: { "03_plain.prompt.md": "Just do it.\n" },
    git: false,
  });
  const [prompt] = (await loadPacket(packet.dir)).prompts;
  assert.equal(prompt?.id, "03");
  assert.equal(prompt?.body, "Just do it.\n");
  assert.deepEqual(prompt?.verify, {});
});

Deno.test("normalizePromptId() writes a whole number with at least two digits", () => {
  assert.equal(normalizePromptId(1), "01");
  assert.equal(normalizePromptId(0), "00");
  assert.equal(normalizePromptId("1"), "01");
  assert.equal(normalizePromptId("007"), "07");
  assert.equal(normalizePromptId(" 12 "), "12");
  assert.equal(normalizePromptId(123), "123");
  assert.equal(normalizePromptId("0100"), "100");
});

Deno.test("normalizePromptId() refuses anything but a whole number", () => {
  for (
    const value of [-1, 1.5, "1.5", "-1", "../x", "1a", "", null, true, []]
  ) {
    assert.equal(normalizePromptId(value), null, JSON.stringify(value));
  }
});

Deno.test("loadPacket() normalises ids from file names and from id keys to two digits", async () => {
  await using packet = await makePacket({
    prompts: {
      "1_one.prompt.md": PROMPT,
      "007_seven.prompt.md": PROMPT,
      "nine.prompt.md": promptFile("id: 9"),
      "4_four.prompt.md": promptFile('id: "004"'),
      "05.prompt.md": PROMPT,
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts.map((p) => p.id), [
    "01",
    "04",
    "05",
    "07",
    "09",
  ]);
});

Deno.test("loadPacket() orders prompts by numeric id, not by file name", async () => {
  await using packet = await makePacket({
    prompts: {
      "10_ten.prompt.md": PROMPT,
      "2_two.prompt.md": PROMPT,
      "100_hundred.prompt.md": PROMPT,
      "01_one.prompt.md": PROMPT,
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts.map((p) => p.id), ["01", "02", "10", "100"]);
});

Deno.test("loadPacket() reads only *.prompt.md files that are not hidden", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_notes.md": "not a prompt",
      ".03_hidden.prompt.md": PROMPT,
      "04_draft.prompt.md.bak": PROMPT,
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts.map((p) => p.id), ["01"]);
});

Deno.test("loadPacket() names a prompt by its name key, its first heading, or its file name", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile("name: Explicit", "# Heading\n"),
      "02_b.prompt.md": promptFile(
        "phase: 1",
        "Intro.\n\n## Sub\n# Write the notes #\n",
      ),
      "03_add-the_tests.prompt.md": promptFile("phase: 1", "No heading.\n"),
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts.map((p) => p.name), [
    "Explicit",
    "Write the notes",
    "Add the tests",
  ]);
});

Deno.test("loadPacket() fills the documented defaults when the manifest says nothing", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(packet, "name: bare");
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.provider, "claude");
  assert.equal(loaded.model, null);
  assert.deepEqual(loaded.recovery, DEFAULT_RECOVERY);
  assert.deepEqual(loaded.view, DEFAULT_VIEW);
  assert.deepEqual(loaded.repos, []);
  const prompt = loaded.prompts[0]!;
  assert.equal(prompt.provider, "claude");
  assert.deepEqual(prompt.recovery, DEFAULT_RECOVERY);
  assert.deepEqual(prompt.agent, DEFAULT_AGENT_OPTIONS);
  assert.equal(prompt.timeout_ms, null);
  assert.equal(prompt.phase, 1);
});

Deno.test("loadPacket() names the packet after its directory when the manifest has no name", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(packet, "provider: simulated");
  assert.equal((await loadPacket(packet.dir)).name, "packet");
});

Deno.test("loadPacket() reads the view settings over the defaults", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    manifest: "tool_output: full\nthinking: hide",
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.view, {
    ...DEFAULT_VIEW,
    tool_output: "full",
    thinking: "hide",
  });
});

Deno.test("loadPacket() refuses a view setting outside its allowed values and names the manifest", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    manifest: "tool_output: everything",
    git: false,
  });
  const error = await refused(packet.dir);
  const manifest = join(await Deno.realPath(packet.dir), MANIFEST_FILE);
  assert.ok(
    error.message.startsWith(`Invalid packet file "${manifest}": `),
    error.message,
  );
  assert.match(error.message, /tool_output/);
  assert.match(error.message, /everything/);
});

Deno.test("loadPacket() lets a prompt override provider, model, agent options key by key, and timeout_ms", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_inherit.prompt.md": PROMPT,
      "02_own.prompt.md": promptFile(
        [
          "model: sonnet",
          "agent:",
          "  permission_mode: plan",
          "  env: {EXTRA: 2}",
          "timeout_ms: unbounded",
        ].join("\n"),
      ),
    },
    git: false,
  });
  await writeManifest(
    packet,
    [
      "provider: claude",
      "model: opus",
      "agent:",
      "  bin: tools/claude",
      "  allowed_tools: [Read, Edit]",
      "  permission_mode: acceptEdits",
      "  add_dirs: [../shared]",
      "  max_turns: 7",
      "timeout_ms: 60000",
    ].join("\n"),
  );
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.model, "opus");
  const [inherit, own] = loaded.prompts;
  assert.deepEqual(
    [inherit?.provider, inherit?.model, inherit?.timeout_ms],
    ["claude", "opus", 60000],
  );
  assert.deepEqual(inherit?.agent, {
    ...DEFAULT_AGENT_OPTIONS,
    bin: join(loaded.dir, "tools/claude"),
    allowed_tools: ["Read", "Edit"],
    permission_mode: "acceptEdits",
    add_dirs: [resolve(loaded.dir, "../shared")],
    max_turns: 7,
  });
  assert.deepEqual([own?.model, own?.timeout_ms], ["sonnet", null]);
  assert.deepEqual(own?.agent, {
    ...inherit?.agent,
    permission_mode: "plan",
    env: { EXTRA: "2" },
  });
});

Deno.test("loadPacket() refuses an agent option that does not apply to the prompt's provider, naming the file it is in", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_b.prompt.md": promptFile("provider: codex"),
    },
    git: false,
  });
  await writeManifest(
    packet,
    "provider: claude\nagent:\n  allowed_tools: [Read]",
  );
  await assert.rejects(
    () => loadPacket(packet.dir),
    (error: Error) => {
      assert.ok(error instanceof UsageError);
      assert.match(
        error.message,
        /prompt_runner_packet\.md": agent\.allowed_tools does not apply to provider "codex" \(it is for claude\)/,
      );
      return true;
    },
  );
});

for (
  const [line, expected] of [
    [
      "agent: {sandbox: open}",
      /agent\.sandbox for codex must be one of read-only, workspace-write, danger-full-access, found "open"/,
    ],
    ["agent: {colour: red}", /unknown key "agent\.colour"/],
    [
      "agent: {max_turns: 0}",
      /agent\.max_turns does not apply to provider "codex"/,
    ],
    ["agent: [bin]", /agent must be a mapping/],
    ['agent: {env: {"1BAD": x}}', /agent\.env: "1BAD" is not a valid name/],
    [
      "agent: {config: {k: [1]}}",
      /agent\.config\.k must be a string, a number or true\/false/,
    ],
    [
      "agent: {steer_lane: sideways}",
      /agent\.steer_lane for codex must be one of auto, resume/,
    ],
    [
      "agent: {transport: acp}",
      /agent\.transport for codex must be one of app_server, exec, found "acp"/,
    ],
    [
      "agent: {args: [--x]}",
      /agent\.args does not apply to provider "codex" \(it is for acp\)/,
    ],
    [
      "agent: {permissions: {read: allow}}",
      /agent\.permissions does not apply to provider "codex" \(it is for acp\)/,
    ],
  ] as const
) {
  Deno.test(`loadPacket() refuses a bad agent block: ${line}`, async () => {
    await using packet = await makePacket({
      prompts: { "01_a.prompt.md": promptFile(`provider: codex\n${line}`) },
      git: false,
    });
    await assert.rejects(() => loadPacket(packet.dir), expected);
  });
}

Deno.test("loadPacket() reads the acp provider's bin, args and permissions", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(
    packet,
    [
      "provider: acp",
      "agent:",
      "  bin: tools/agent-acp",
      "  args: [--acp, 7]",
      "  permissions: {read: allow, edit: allow, execute: deny}",
    ].join("\n"),
  );
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts[0]?.agent, {
    ...DEFAULT_AGENT_OPTIONS,
    bin: join(loaded.dir, "tools/agent-acp"),
    args: ["--acp", "7"],
    permissions: { read: "allow", edit: "allow", execute: "deny" },
  });
});

Deno.test("loadPacket() reads gemini's transport", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(
        "provider: gemini\nagent: {transport: stream_json}",
      ),
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.prompts[0]?.agent.transport, "stream_json");
});

for (
  const [line, expected] of [
    [
      "agent: {permissions: {write: allow}}",
      /agent\.permissions: "write" is not an ACP tool kind \(one of read, edit, delete, move, search, execute, think, fetch, other\)/,
    ],
    [
      "agent: {permissions: {edit: yes}}",
      /agent\.permissions\.edit must be allow or deny, found "yes"/,
    ],
    ["agent: {permissions: [read]}", /agent\.permissions must be a mapping/],
    ["agent: {args: --x}", /agent\.args must be a list of arguments/],
    [
      "agent: {transport: exec}",
      /agent\.transport does not apply to provider "acp"/,
    ],
  ] as const
) {
  Deno.test(`loadPacket() refuses a bad acp agent block: ${line}`, async () => {
    await using packet = await makePacket({
      prompts: { "01_a.prompt.md": promptFile(`provider: acp\n${line}`) },
      git: false,
    });
    await assert.rejects(() => loadPacket(packet.dir), expected);
  });
}

for (
  const [key, replacement] of [
    ["timeout: 5000", "timeout_ms"],
    ["allowed_tools: [Read]", "agent.allowed_tools"],
    ["permission_mode: plan", "agent.permission_mode"],
  ] as const
) {
  Deno.test(`loadPacket() refuses the older key "${key}" with a hint naming ${replacement}`, async () => {
    await using packet = await makePacket({
      prompts: { "01_a.prompt.md": PROMPT },
      manifest: key,
      git: false,
    });
    await assert.rejects(
      () => loadPacket(packet.dir),
      (error: Error) => {
        assert.ok(error instanceof UsageError);
        assert.match(error.message, /is no longer a key/);
        assert.equal(error.hint, `Use ${replacement} instead`);
        return true;
      },
    );
  });
}

Deno.test("loadPacket() maps provider aliases to their names", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_b.prompt.md": promptFile("provider: cursor_agent"),
    },
    git: false,
  });
  await writeManifest(packet, "provider: Simulation");
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.provider, "simulated");
  assert.deepEqual(loaded.prompts.map((p) => p.provider), [
    "simulated",
    "cursor",
  ]);
});

Deno.test("loadPacket() refuses a timeout that is not a positive number or unbounded", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("timeout_ms: -5"),
  );
  assert.equal(
    message,
    `Invalid packet file "${file}": timeout_ms must be a positive number of milliseconds or "unbounded", found -5`,
  );
});

Deno.test("loadPacket() merges recovery: defaults, then the manifest, then the prompt", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_b.prompt.md": promptFile(
        "recovery:\n  max_steers: 0\n  repair: {enabled: false}",
      ),
    },
    git: false,
  });
  await writeManifest(
    packet,
    "provider: simulated\nrecovery:\n  max_steers: 5\n  retry: {max_attempts: 1}",
  );
  const loaded = await loadPacket(packet.dir);
  const packetRecovery = {
    ...DEFAULT_RECOVERY,
    max_steers: 5,
    retry: { ...DEFAULT_RECOVERY.retry, max_attempts: 1 },
  };
  assert.deepEqual(loaded.recovery, packetRecovery);
  assert.deepEqual(loaded.prompts[0]?.recovery, packetRecovery);
  assert.deepEqual(loaded.prompts[1]?.recovery, {
    ...packetRecovery,
    max_steers: 0,
    repair: { enabled: false, max_attempts: 2 },
  });
});

Deno.test("loadPacket() refuses a bad recovery value in a prompt and names the key", async () => {
  const { message, code, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("recovery:\n  retry: {max_attempts: lots}"),
  );
  assert.equal(code, "INVALID_PACKET");
  assert.equal(
    message,
    `Invalid recovery setting recovery.retry.max_attempts in "${file}": expected a whole number >= 0, found "lots"`,
  );
});

Deno.test("loadPacket() refuses a bad recovery value in the manifest and names the key", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(packet, "recovery:\n  repair: {enabled: sometimes}");
  const error = await refused(packet.dir);
  assert.match(
    error.message,
    /^Invalid recovery setting recovery\.repair\.enabled in ".*prompt_runner_packet\.md": expected true or false, found "sometimes"$/,
  );
});

Deno.test("loadPacket() works each prompt in its first target, else the default repo", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_default.prompt.md": PROMPT,
      "02_docs.prompt.md": promptFile("targets: [docs, app]"),
      "03_single.prompt.md": promptFile("targets: docs"),
    },
    git: false,
  });
  await writeManifest(
    packet,
    "repos:\n  docs: {path: ../docs}\n  app: {path: workspace, default: true}",
  );
  const loaded = await loadPacket(packet.dir);
  const dir = await Deno.realPath(packet.dir);
  const app = join(dir, "workspace");
  const docs = join(dir, "..", "docs");
  assert.deepEqual(loaded.repos, [
    { name: "app", path: app, default: true },
    { name: "docs", path: docs, default: false },
  ]);
  assert.deepEqual(
    loaded.prompts.map((p) => [p.id, p.targets, p.cwd]),
    [
      ["01", [], app],
      ["02", ["docs", "app"], docs],
      ["03", ["docs"], docs],
    ],
  );
});

Deno.test("loadPacket() makes a lone repo the default and works in the packet without repos", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  const dir = await Deno.realPath(packet.dir);
  await writeManifest(packet, "repos:\n  only: /abs/only");
  const lone = await loadPacket(packet.dir);
  assert.deepEqual(lone.repos, [
    { name: "only", path: "/abs/only", default: true },
  ]);
  assert.equal(lone.prompts[0]?.cwd, "/abs/only");
  await writeManifest(packet, "name: none");
  const none = await loadPacket(packet.dir);
  assert.equal(none.prompts[0]?.cwd, dir);
});

Deno.test("loadPacket() refuses two default repos", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(
    packet,
    "repos:\n  app: {path: workspace, default: true}\n  docs: {path: docs, default: true}",
  );
  const error = await refused(packet.dir);
  assert.match(
    error.message,
    /only one repo can be the default, found app, docs$/,
  );
});

Deno.test("loadPacket() refuses an unknown target and names the declared repos", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("targets: [web]"),
  );
  assert.equal(
    message,
    `Invalid packet file "${file}": unknown target "web" (the packet declares app)`,
  );
});

Deno.test("loadPacket() normalises depends_on to known two-digit ids without repeats", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_b.prompt.md": promptFile("depends_on: 1"),
      "03_c.prompt.md": promptFile('depends_on: ["1", 2, "01", "002"]'),
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts.map((p) => p.depends_on), [
    [],
    ["01"],
    ["01", "02"],
  ]);
  assert.equal("raw_depends_on" in loaded.prompts[2]!, false);
});

Deno.test("loadPacket() refuses depends_on naming an unknown prompt", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "02_b.prompt.md": promptFile("depends_on: [1, 7]"),
    },
    git: false,
  });
  const error = await refused(packet.dir);
  const file = join(
    await Deno.realPath(packet.dir),
    "prompts",
    "02_b.prompt.md",
  );
  assert.equal(
    error.message,
    `Invalid packet file "${file}": depends_on names unknown prompt "07"`,
  );
});

Deno.test("loadPacket() refuses a prompt that depends on itself or on a non-id", async () => {
  const self = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("depends_on: 1"),
  );
  assert.match(self.message, /a prompt cannot depend on itself$/);
  const bad = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("depends_on: [setup]"),
  );
  assert.match(
    bad.message,
    /depends_on entries must be prompt ids, found "setup"$/,
  );
});

Deno.test("loadPacket() refuses invalid YAML and names the file and a line", async () => {
  const { message, code, file } = await refusedPrompt(
    "01_a.prompt.md",
    "---\nname: a\nverify: [unclosed\n---\nbody\n",
  );
  assert.equal(code, "INVALID_PACKET");
  assert.ok(
    message.startsWith(`Invalid YAML front matter in "${file}": line `),
    message,
  );
  assert.match(message, /: line \d+: /);
});

Deno.test("loadPacket() refuses invalid YAML in the manifest and names it", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await writeManifest(packet, "name: [oops");
  const error = await refused(packet.dir);
  const manifest = join(await Deno.realPath(packet.dir), MANIFEST_FILE);
  assert.ok(
    error.message.startsWith(
      `Invalid YAML front matter in "${manifest}": line `,
    ),
    error.message,
  );
});

Deno.test("loadPacket() refuses an unknown verify clause and lists the known ones", async () => {
  const { message, code, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("verify:\n  file_exists: [a.md]"),
  );
  assert.equal(code, "UNKNOWN_CLAUSE");
  assert.equal(
    message,
    `Unknown verify clause "file_exists" in "${file}": known clauses are files_exist, files_absent, contains, matches, commands, changed_paths_only`,
  );
});

Deno.test("loadPacket() refuses a verify entry in an undeclared repo", async () => {
  const { message } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("verify:\n  files_exist: [{path: a.md, repo: web}]"),
  );
  assert.match(
    message,
    /^Invalid verify entry files_exist\[0\] .*unknown repo "web" \(the packet declares app\)$/,
  );
});

Deno.test("loadPacket() refuses a command given as a shell string", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile('verify:\n  commands: ["deno test -A"]'),
  );
  assert.equal(
    message,
    `Invalid verify entry commands[0] in "${file}": a command must be {exec, args}, not the shell string "deno test -A": commands are never run through a shell`,
  );
});

Deno.test("loadPacket() refuses an invalid regular expression", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile('verify:\n  matches: [{path: a.md, pattern: "[a-"}]'),
  );
  assert.ok(
    message.startsWith(
      `Invalid verify entry matches[0] in "${file}": pattern "[a-" is not a valid regular expression: `,
    ),
    message,
  );
});

Deno.test("loadPacket() refuses a duplicate id and names both files", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": PROMPT,
      "1_b.prompt.md": PROMPT,
    },
    git: false,
  });
  const error = await refused(packet.dir);
  const prompts = join(await Deno.realPath(packet.dir), "prompts");
  assert.equal(error.code, "INVALID_PACKET");
  assert.equal(
    error.message,
    `Invalid packet file "${
      join(prompts, "1_b.prompt.md")
    }": duplicate prompt id "01" (also used by "${
      join(prompts, "01_a.prompt.md")
    }")`,
  );
});

Deno.test("loadPacket() refuses a duplicate id given by an id key", async () => {
  await using packet = await makePacket({
    prompts: {
      "02_a.prompt.md": PROMPT,
      "b.prompt.md": promptFile("id: 2"),
    },
    git: false,
  });
  const error = await refused(packet.dir);
  assert.match(
    error.message,
    /duplicate prompt id "02" \(also used by ".*02_a\.prompt\.md"\)$/,
  );
  assert.match(error.message, /b\.prompt\.md": duplicate/);
});

Deno.test("loadPacket() refuses an id that does not match the file name", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("id: 2"),
  );
  assert.equal(
    message,
    `Invalid packet file "${file}": id "02" does not match the file name, which starts with "01"`,
  );
});

Deno.test("loadPacket() refuses an id that is not a whole number", async () => {
  const { message } = await refusedPrompt(
    "a.prompt.md",
    promptFile("id: first"),
  );
  assert.match(
    message,
    /id must be a whole number such as "01", found "first"$/,
  );
});

Deno.test("loadPacket() refuses a prompt whose id it cannot tell", async () => {
  const { message, file } = await refusedPrompt("setup.prompt.md", PROMPT);
  assert.equal(
    message,
    `Invalid packet file "${file}": cannot tell the prompt id: name the file NN_slug.prompt.md or set id`,
  );
});

Deno.test("loadPacket() refuses a front matter that is not a mapping", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    "---\n- name: a\n- id: 1\n---\nbody\n",
  );
  assert.equal(
    message,
    `Invalid front matter in "${file}": expected a mapping of keys, found a list`,
  );
});

Deno.test("loadPacket() refuses an unclosed front matter", async () => {
  const { message, file } = await refusedPrompt(
    "01_a.prompt.md",
    "---\nname: a\n\nDo the task.\n",
  );
  assert.equal(
    message,
    `Invalid front matter in "${file}": the opening --- line has no closing --- line`,
  );
});

Deno.test("loadPacket() refuses a phase that is not a whole number", async () => {
  const { message } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("phase: two"),
  );
  assert.match(message, /phase must be a whole number$/);
});

Deno.test("loadPacket() refuses a packet without prompts", async () => {
  await using packet = await makePacket({ git: false });
  const error = await refused(packet.dir);
  assert.equal(error.exitCode, 2);
  assert.match(
    error.message,
    /no prompts found in ".*prompts" \(expected NN_slug\.prompt\.md files\)$/,
  );
  await Deno.remove(join(packet.dir, "prompts"));
  const missing = await refused(packet.dir);
  assert.match(missing.message, /no prompts found/);
});

Deno.test("loadPacket() throws NotFoundError (exit 3) for a missing packet directory", async () => {
  await using packet = await makePacket({ git: false });
  const gone = join(packet.root, "no-such-packet");
  const error = await refused(gone, NotFoundError);
  assert.equal(error.exitCode, 3);
  assert.equal(error.code, "PACKET_NOT_FOUND");
  assert.equal(
    error.message,
    `Cannot find packet "${gone}": no such directory`,
  );
});

Deno.test("loadPacket() throws NotFoundError for a packet path that is a file", async () => {
  await using packet = await makePacket({ git: false });
  const file = join(packet.dir, MANIFEST_FILE);
  const error = await refused(file, NotFoundError);
  assert.equal(error.exitCode, 3);
  assert.equal(error.message, `Cannot load packet "${file}": not a directory`);
});

Deno.test("loadPacket() throws NotFoundError with a hint for a directory without a manifest", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  await Deno.remove(join(packet.dir, MANIFEST_FILE));
  const error = await refused(packet.dir, NotFoundError);
  assert.equal(error.exitCode, 3);
  assert.equal(error.code, "PACKET_NOT_FOUND");
  assert.equal(
    error.message,
    `Cannot find packet "${packet.dir}": it has no ${MANIFEST_FILE}`,
  );
  assert.match(error.hint ?? "", /prompt_runner_packet\.md and prompts\//);
});

Deno.test("loadPacket() gives invalid packets exit code 2 and missing ones exit code 3", async () => {
  const invalid = await refusedPrompt("01_a.prompt.md", promptFile("phase: x"));
  assert.ok(invalid.message.length > 0);
  await using packet = await makePacket({ git: false });
  const missing = await refused(join(packet.root, "nope"), NotFoundError);
  assert.equal(missing.exitCode, 3);
  assert.ok(!(missing instanceof UsageError));
});

Deno.test("loadPacket() resolves a packet reached through a symlink to its real path", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
    git: false,
  });
  const link = join(packet.root, "link");
  await Deno.symlink(packet.dir, link);
  const loaded: Packet = await loadPacket(link);
  const dir = await Deno.realPath(packet.dir);
  assert.equal(loaded.dir, dir);
  assert.equal(loaded.repos[0]?.path, join(dir, "workspace"));
  assert.equal(loaded.prompts[0]?.file, join(dir, "prompts", "01_a.prompt.md"));
});

Deno.test("loadPacket() reads prompts from prompt_dir when the manifest names one", async () => {
  await using packet = await makePacket({
    manifest: "prompt_dir: steps",
    git: false,
  });
  await Deno.mkdir(join(packet.dir, "steps"));
  await Deno.writeTextFile(join(packet.dir, "steps", "01_a.prompt.md"), PROMPT);
  const loaded = await loadPacket(packet.dir);
  assert.equal(
    loaded.prompts[0]?.file,
    join(await Deno.realPath(packet.dir), "steps", "01_a.prompt.md"),
  );
});

/**
 * Unknown keys at every level of the format: [where, the file's front
 * matter lines, the key's dotted path, the hint's suggestion or null].
 */
const UNKNOWN_KEYS: ["manifest" | "prompt", string, string, string | null][] = [
  ["manifest", "recovry: {max_steers: 1}", "recovry", "recovery"],
  ["manifest", "max_steer: 5", "max_steer", "recovery.max_steers"],
  ["manifest", "timout_ms: 1000", "timout_ms", "timeout_ms"],
  ["manifest", "colour: blue", "colour", null],
  [
    "manifest",
    "recovery:\n  retry: {max_atempts: 0}",
    "recovery.retry.max_atempts",
    "recovery.retry.max_attempts",
  ],
  [
    "manifest",
    "recovery:\n  repair: {enable: false}",
    "recovery.repair.enable",
    "recovery.repair.enabled",
  ],
  ["manifest", "agent: {sandbx: read-only}", "agent.sandbx", "agent.sandbox"],
  ["prompt", "verfy: {files_exist: [a.md]}", "verfy", "verify"],
  ["prompt", "timeout_m: 5000", "timeout_m", "timeout_ms"],
  ["prompt", "sandbox: read-only", "sandbox", "agent.sandbox"],
  [
    "prompt",
    "recovery: {max_steer: 1}",
    "recovery.max_steer",
    "recovery.max_steers",
  ],
  [
    "prompt",
    "verify: {commands: [{exec: deno, timout_ms: 5}]}",
    "verify.commands[0].timout_ms",
    "verify.commands[0].timeout_ms",
  ],
  [
    "prompt",
    "verify: {contains: [{path: a.md, txt: hi}]}",
    "verify.contains[0].txt",
    "verify.contains[0].text",
  ],
  [
    "prompt",
    "verify: {matches: [{path: a.md, pattern: x}, {path: b.md, patern: y}]}",
    "verify.matches[1].patern",
    "verify.matches[1].pattern",
  ],
  [
    "prompt",
    "verify: {files_exist: [{path: a.md, rep: app}]}",
    "verify.files_exist[0].rep",
    "verify.files_exist[0].repo",
  ],
  [
    "prompt",
    "simulate: {atempts: []}",
    "simulate.atempts",
    "simulate.attempts",
  ],
  [
    "prompt",
    "simulate: {attempts: [{}, {mesages: [hi]}]}",
    "simulate.attempts[1].mesages",
    "simulate.attempts[1].messages",
  ],
  [
    "prompt",
    "simulate: {attempts: [{tools: [{name: Edit, ouput: ok}]}]}",
    "simulate.attempts[0].tools[0].ouput",
    "simulate.attempts[0].tools[0].output",
  ],
  [
    "prompt",
    "simulate: {attempts: [{writes: [{path: a.md, txt: hi}]}]}",
    "simulate.attempts[0].writes[0].txt",
    "simulate.attempts[0].writes[0].text",
  ],
  [
    "prompt",
    "simulate: {attempts: [{usage: {input_token: 10}}]}",
    "simulate.attempts[0].usage.input_token",
    "simulate.attempts[0].usage.input_tokens",
  ],
  [
    "prompt",
    "simulate: {attempts: [{error: {kind: protocol_error, mesage: x}}]}",
    "simulate.attempts[0].error.mesage",
    "simulate.attempts[0].error.message",
  ],
  [
    "prompt",
    "simulate: {attempts: [{error: {kind: protocol_error, recovery: {retryabel: false}}}]}",
    "simulate.attempts[0].error.recovery.retryabel",
    "simulate.attempts[0].error.recovery.retryable",
  ],
  ["prompt", "simulate: {resume: {delay: 5}}", "simulate.resume.delay", null],
  [
    "prompt",
    "simulate: {resume: {delay_m: 5}}",
    "simulate.resume.delay_m",
    "simulate.resume.delay_ms",
  ],
];

for (const [where, lines, key, near] of UNKNOWN_KEYS) {
  Deno.test(
    `loadPacket() refuses the unknown ${where} key "${key}" (exit 2), naming the file and ${
      near === null ? "the known keys" : `"${near}"`
    }`,
    async () => {
      await using packet = await makePacket({
        prompts: {
          "01_a.prompt.md": promptFile(where === "prompt" ? lines : "name: A"),
        },
        git: false,
      });
      if (where === "manifest") {
        await writeManifest(packet, `provider: simulated\n${lines}`);
      }
      const dir = await Deno.realPath(packet.dir);
      const file = where === "manifest"
        ? join(dir, MANIFEST_FILE)
        : join(dir, "prompts", "01_a.prompt.md");
      const error = await refused(packet.dir);
      assert.equal(error.exitCode, 2);
      assert.equal(error.code, "INVALID_PACKET");
      assert.equal(
        error.message,
        `Invalid packet file "${file}": unknown key "${key}"`,
      );
      const block = key.includes(".") ? key.slice(0, key.lastIndexOf(".")) : "";
      if (near === null) {
        assert.match(
          error.hint ?? "",
          new RegExp(
            `^Known keys${
              block ? ` of ${block.replace(/[.[\]]/g, "\\$&")}` : ""
            }: `,
          ),
        );
      } else {
        assert.ok(
          error.hint?.startsWith(`Did you mean "${near}"? Known keys`),
          error.hint,
        );
      }
    },
  );
}

Deno.test("loadPacket() refuses an unknown repo key, naming the repo", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": PROMPT },
  });
  await writeManifest(
    packet,
    "provider: simulated\nrepos:\n  app: {path: workspace, defualt: true}",
  );
  const error = await refused(packet.dir);
  assert.equal(
    error.message,
    `Invalid packet file "${
      join(await Deno.realPath(packet.dir), MANIFEST_FILE)
    }": unknown key "repos.app.defualt"`,
  );
  assert.equal(
    error.hint,
    'Did you mean "repos.app.default"? Known keys of repos.app: path, default',
  );
  await writeManifest(
    packet,
    "provider: simulated\nrepos:\n  - {name: app, path: workspace, paht: x}",
  );
  assert.match(
    (await refused(packet.dir)).message,
    /unknown key "repos\.app\.paht"$/,
  );
});

Deno.test("loadPacket() checks the simulate script's keys whatever the provider", async () => {
  const { message } = await refusedPrompt(
    "01_a.prompt.md",
    promptFile("provider: codex\nsimulate: {attempts: [{mesages: [hi]}]}"),
  );
  assert.match(message, /unknown key "simulate\.attempts\[0\]\.mesages"$/);
});

Deno.test("loadPacket() accepts every key the packet format defines", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(`id: "01"
name: A
phase: 1
targets: [app]
depends_on: []
provider: simulated
model: m
timeout_ms: 5000
recovery:
  max_steers: 1
  resume_attempts: 1
  retry: {max_attempts: 1, base_delay_ms: 0, max_delay_ms: 0, jitter: false, class_attempts: {provider_capacity: 2}}
  repair: {enabled: true, max_attempts: 1}
agent: {steer_lane: auto}
verify:
  files_exist: [a.md, {path: b.md, repo: app}]
  files_absent: [{path: c.md}]
  contains: [{path: a.md, text: hi, repo: app}]
  matches: [{path: a.md, pattern: "^h", repo: app}]
  commands: [{exec: deno, args: [--version], timeout_ms: 5000, cwd: ".", repo: app, env: {A: b}, stdout_contains: deno}]
  changed_paths_only: [a.md]
simulate:
  lane: stdin
  attempts:
    - delay_ms: 0
      repeat: 1
      label: first
      thinking: [t]
      messages: [m]
      tools: [{name: Edit, input: {}, output: ok, error: false}]
      writes: [{path: a.md, text: hi, append: false, repo: app}]
      usage: {input_tokens: 1, output_tokens: 1, cost_usd: 0.01}
      error: {kind: protocol_error, message: x, recovery: {class: protocol_error, retryable: true, repairable: true, resumeable: true, local_deterministic: false, suggested_delay_ms: 0}}
  resume: {messages: [again]}`),
    },
    manifest: `model: m
log_mode: compact
tool_output: summary
thinking: show
diff: stat
timeout_ms: 60000
agent: {steer_lane: auto}`,
  });
  const loaded = await loadPacket(packet.dir);
  assert.equal(loaded.prompts[0]?.id, "01");
  assert.deepEqual(loaded.warnings, []);
});

Deno.test("loadPacket() passes a prompt's simulate script through as written", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile(
        "simulate:\n  attempts:\n    - messages: [hi]\n      delay_ms: 5",
      ),
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.prompts[0]?.simulate, {
    attempts: [{ messages: ["hi"], delay_ms: 5 }],
  });
});
