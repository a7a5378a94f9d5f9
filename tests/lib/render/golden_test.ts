/**
 * Golden tests: the fixture stream (every event type, every tool kind) in
 * each mode and at each tool_output, thinking and diff level. Run with
 * UPDATE_GOLDENS=1 to rewrite the goldens after a deliberate change, then
 * read the diff.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { createRenderer } from "../../../lib/render/create_renderer.ts";
import {
  pathOnlyChanges,
  readWorktreeDiffs,
  type RenderContext,
} from "../../../lib/render/worktree_diff.ts";
import { stripAnsi } from "../../../lib/render/ansi.ts";
import {
  DEFAULT_VIEW,
  type RunEvent,
  type ViewSettings,
} from "../../../lib/shared/mod.ts";
import { git, makeRepo } from "../../_helpers/temp_packet.ts";

const DATA = join(import.meta.dirname!, "..", "..", "testdata", "render");
const UPDATE = Deno.env.get("UPDATE_GOLDENS") === "1";

async function fixture(): Promise<RunEvent[]> {
  return (await Deno.readTextFile(join(DATA, "events.jsonl"))).trimEnd().split(
    "\n",
  ).map((line) => JSON.parse(line));
}

/** Renders the stream as the runner does, reading current diffs from `repo`. */
async function renderStream(
  events: RunEvent[],
  view: ViewSettings,
  repo?: string,
): Promise<string> {
  const renderer = createRenderer(view);
  const tools = new Map<
    string,
    { name: string; input: Record<string, unknown> }
  >();
  let out = "";
  for (const event of events) {
    if (event.type === "tool_call_started") {
      tools.set(String(event.data.tool_call_id), {
        name: String(event.data.tool_name),
        input: event.data.tool_input as Record<string, unknown>,
      });
    }
    let context: RenderContext = {};
    const paths = pathOnlyChanges(event, tools);
    if (repo && paths.length && view.diff === "full") {
      context = { worktree_diffs: await readWorktreeDiffs(paths, repo) };
    }
    out += renderer.render(event, context);
  }
  return stripAnsi(out + renderer.finish());
}

async function compareGolden(name: string, actual: string): Promise<void> {
  const path = join(DATA, name);
  if (UPDATE) {
    await Deno.writeTextFile(path, actual);
    return;
  }
  const expected = await Deno.readTextFile(path).catch(() => {
    throw new Error(`No golden ${path}: run the test with UPDATE_GOLDENS=1`);
  });
  assert.equal(actual, expected, `${name} differs from its golden`);
}

/** A repo where CHANGELOG.md (the path-only change) is new and uncommitted. */
async function changelogRepo(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_golden_" });
  await makeRepo(dir, { "README.md": "seed\n" });
  await Deno.writeTextFile(
    join(dir, "CHANGELOG.md"),
    "# Changelog\n\n## 0.2.0\n\n- Greet by name.\n",
  );
  return dir;
}

const VARIANTS: [string, Partial<ViewSettings>][] = [
  ["", {}],
  [".thinking-hide", { thinking: "hide" }],
  [".tool-output-none", { tool_output: "none" }],
  [".tool-output-preview", { tool_output: "preview" }],
  [".tool-output-full", { tool_output: "full" }],
  [".diff-none", { diff: "none" }],
  [".diff-full", { diff: "full" }],
];

for (const mode of ["compact", "verbose", "studio"] as const) {
  for (const [suffix, change] of VARIANTS) {
    Deno.test(`${mode} renders the fixture stream as its golden${suffix || " (default view)"}`, async () => {
      const repo = await changelogRepo();
      try {
        const view = { ...DEFAULT_VIEW, log_mode: mode, ...change };
        await compareGolden(
          `${mode}${suffix}.txt`,
          await renderStream(await fixture(), view, repo),
        );
      } finally {
        await Deno.remove(repo, { recursive: true });
      }
    });
  }
}

function event(
  seq: number,
  type: RunEvent["type"],
  data: Record<string, unknown>,
): RunEvent {
  return {
    v: 1,
    seq,
    at: "2026-11-30T12:00:00.000Z",
    run_id: "r",
    prompt_id: "01",
    attempt: 1,
    type,
    data,
  } as RunEvent;
}

function writeOf(content: string): RunEvent[] {
  return [
    event(1, "tool_call_started", {
      tool_call_id: "w",
      tool_name: "Write",
      tool_input: { file_path: "big.txt", content },
    }),
    event(2, "tool_call_completed", { tool_call_id: "w", tool_output: "ok" }),
  ];
}

Deno.test("studio cuts a 200-line write at 60 lines and says how many more", async () => {
  const content =
    Array.from({ length: 200 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  const view: ViewSettings = {
    ...DEFAULT_VIEW,
    log_mode: "studio",
    diff: "full",
  };
  const text = await renderStream(writeOf(content), view);
  await compareGolden("studio.write-200-lines.txt", text);
  const lines = text.split("\n");
  assert.ok(lines.includes("  ✓ Wrote big.txt (200 lines)  +200 \u22120"));
  assert.equal(lines.filter((l) => l.startsWith("    + line ")).length, 60);
  assert.ok(lines.includes("    + line 60"));
  assert.ok(!lines.includes("    + line 61"));
  assert.equal(lines.at(-2), "    [truncated: 140 more lines]");
});

Deno.test("diff counts are exact and a final newline adds no phantom line", async () => {
  const view: ViewSettings = { ...DEFAULT_VIEW, log_mode: "compact" };
  assert.match(
    await renderStream(writeOf("a\nb\nc\n"), view),
    /t-Write {2}\+3 \u22120/,
  );
  assert.match(
    await renderStream(writeOf("a\nb\nc"), view),
    /t-Write {2}\+3 \u22120/,
  );
  const edit = [
    event(1, "tool_call_started", {
      tool_call_id: "e",
      tool_name: "Edit",
      tool_input: {
        file_path: "a.md",
        old_string: "one\ntwo\nthree\n",
        new_string: "one\n2\nthree\nfour\n",
      },
    }),
    event(2, "tool_call_completed", { tool_call_id: "e", tool_output: "ok" }),
  ];
  const studio = await renderStream(edit, {
    ...DEFAULT_VIEW,
    log_mode: "studio",
    diff: "full",
  });
  assert.equal(
    studio,
    [
      "  ◐ Editing a.md",
      "  ✓ Edited a.md  +2 \u22121",
      "      one",
      "    - two",
      "    + 2",
      "      three",
      "    + four",
      "",
    ].join("\n"),
  );
});

Deno.test("a path-only change never shows counts, and full shows the labelled current state from git", async () => {
  const repo = await changelogRepo();
  try {
    const events = [
      event(1, "tool_call_started", {
        tool_call_id: "c",
        tool_name: "file_change",
        tool_input: { changes: [{ path: "CHANGELOG.md", kind: "add" }] },
      }),
      event(2, "tool_call_completed", {
        tool_call_id: "c",
        tool_output: "applied",
      }),
    ];
    const stat = await renderStream(events, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "stat",
    }, repo);
    assert.equal(stat, "  ◐ Changing CHANGELOG.md\n  ✓ Changed CHANGELOG.md\n");
    const full = await renderStream(events, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "full",
    }, repo);
    assert.match(
      full,
      /\n {4}\(current state of CHANGELOG\.md, not this call's change\)\n {4}\+ # Changelog\n/,
    );
    assert.doesNotMatch(
      full,
      /[+−]\d/,
      "no counts for a change the event does not carry",
    );
    // A committed, unchanged file has no current change to show.
    await git(repo, ["add", "CHANGELOG.md"]);
    await git(repo, ["commit", "-q", "-m", "log"]);
    const clean = await renderStream(events, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "full",
    }, repo);
    assert.match(
      clean,
      /\(current state of CHANGELOG\.md, not this call's change\)\n {4}\(no uncommitted change\)\n/,
    );
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("studio shows an assistant message once, whether it streamed or came whole", async () => {
  const streamed = [
    event(1, "message_streamed", { delta: "Hello ", kind: "text" }),
    event(2, "message_streamed", { delta: "there.", kind: "text" }),
    event(3, "message_received", {
      content: "Hello there.",
      role: "assistant",
    }),
  ];
  const whole = [
    event(1, "message_received", {
      content: "Hello there.\nSecond line.",
      role: "assistant",
    }),
  ];
  const view: ViewSettings = { ...DEFAULT_VIEW, log_mode: "studio" };
  assert.equal(await renderStream(streamed, view), "\n  Hello there.\n");
  assert.equal(
    await renderStream(whole, view),
    "\n  Hello there.\n  Second line.\n",
  );
});

Deno.test("compact and verbose name the tool on its finish line from its start", async () => {
  const events = [
    event(1, "tool_call_started", {
      tool_call_id: "x",
      tool_name: "Grep",
      tool_input: { pattern: "a" },
    }),
    event(2, "tool_call_completed", {
      tool_call_id: "x",
      tool_output: "one\ntwo",
    }),
  ];
  assert.match(
    await renderStream(events, { ...DEFAULT_VIEW, log_mode: "compact" }),
    /^t-Grep /m,
  );
  assert.match(
    await renderStream(events, { ...DEFAULT_VIEW, log_mode: "verbose" }),
    /^\[tool_call_completed\] prompt=01 attempt=1 name=Grep id=x /m,
  );
});

Deno.test("a renderer's setView() takes effect from the next event", () => {
  const renderer = createRenderer({ ...DEFAULT_VIEW, log_mode: "compact" });
  const thought = event(1, "message_streamed", {
    delta: "hmm",
    kind: "thinking",
  });
  assert.notEqual(renderer.render(thought), "");
  renderer.setView({ ...DEFAULT_VIEW, log_mode: "compact", thinking: "hide" });
  assert.equal(renderer.render({ ...thought, seq: 2 }), "");
  assert.equal(stripAnsi(renderer.finish()), "\n--- 1 event, 0 tools ---\n");
});

Deno.test("an Antigravity replace_file_content names only its target: no counts, and a labelled current state", async () => {
  const events = [
    event(1, "tool_call_started", {
      tool_call_id: "g",
      tool_name: "replace_file_content",
      tool_input: { TargetFile: "CHANGELOG.md", Instruction: "add an entry" },
    }),
    event(2, "tool_call_completed", { tool_call_id: "g", tool_output: "done" }),
  ];
  const repo = await changelogRepo();
  try {
    const stat = await renderStream(events, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
    }, repo);
    assert.equal(stat, "  ◐ Editing CHANGELOG.md\n  ✓ Edited CHANGELOG.md\n");
    const full = await renderStream(events, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "full",
    }, repo);
    assert.match(
      full,
      /\(current state of CHANGELOG\.md, not this call's change\)\n {4}\+ # Changelog/,
    );
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

Deno.test("a change list that carries its patch (Codex's fileChange diff, an ACP agent's old and new text) is drawn as the tool's own patch with counts, never as the current state", async () => {
  const repo = await changelogRepo();
  try {
    const codex = [
      event(1, "tool_call_started", {
        tool_call_id: "c",
        tool_name: "file_change",
        tool_input: {
          changes: [{
            path: "NOTES.md",
            kind: "update",
            diff: "@@ -1,2 +1,2 @@\n keep\n-draft\n+final\n",
          }],
        },
      }),
      event(2, "tool_call_completed", { tool_call_id: "c", tool_output: "" }),
    ];
    const full = await renderStream(codex, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "full",
    }, repo);
    assert.match(full, /Changed NOTES\.md {2}\+1 −1\n/);
    assert.match(full, /\n {4} {2}keep\n {4}- draft\n {4}\+ final\n/);
    assert.doesNotMatch(full, /current state/);
    // ACP: the start names the tool, the completion carries the diff.
    const acp = [
      event(1, "tool_call_started", {
        tool_call_id: "w",
        tool_name: "edit",
        tool_input: { path: "CHANGELOG.md" },
      }),
      event(2, "tool_call_completed", {
        tool_call_id: "w",
        tool_name: "edit",
        tool_output: "",
        tool_input: {
          changes: [{
            path: "CHANGELOG.md",
            old_text: "# Log\nold\n",
            new_text: "# Log\nnew\n",
          }],
        },
      }),
    ];
    const drawn = await renderStream(acp, {
      ...DEFAULT_VIEW,
      log_mode: "studio",
      diff: "full",
    }, repo);
    assert.match(drawn, /\+1 −1\n/);
    assert.match(drawn, /\n {4}- old\n {4}\+ new\n/);
    assert.doesNotMatch(drawn, /current state/);
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});
