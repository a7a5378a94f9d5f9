import assert from "node:assert/strict";
import { stripAnsi } from "../../../lib/render/ansi.ts";
import { createRenderer } from "../../../lib/render/create_renderer.ts";
import type { Renderer } from "../../../lib/render/renderer.ts";
import {
  DEFAULT_VIEW,
  type RunEvent,
  type ViewSettings,
} from "../../../lib/shared/mod.ts";

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

const MODES: ViewSettings["log_mode"][] = ["compact", "verbose", "studio"];

/**
 * Renders `before` with a renderer for `from`, replaces it as the runner
 * does (handover, detach, a new renderer), and renders `after` with the new
 * one. Returns what was shown, without styling.
 */
function renderAcrossSwitch(
  from: ViewSettings["log_mode"],
  to: ViewSettings["log_mode"],
  before: RunEvent[],
  after: RunEvent[],
): string {
  const old: Renderer = createRenderer({ ...DEFAULT_VIEW, log_mode: from });
  let out = before.map((e) => old.render(e)).join("");
  const handover = old.handover();
  out += old.detach();
  const next = createRenderer({ ...DEFAULT_VIEW, log_mode: to }, {
    handover,
  });
  out += after.map((e) => next.render(e)).join("");
  return stripAnsi(out);
}

for (const from of MODES) {
  for (const to of ["compact", "studio"] as const) {
    Deno.test(`a ${to} renderer that replaces a ${from} one between a message's streamed text and its message_received does not show the message again`, () => {
      const shown = renderAcrossSwitch(
        from,
        to,
        [event(1, "message_streamed", { delta: "m06", kind: "text" })],
        [
          event(2, "message_received", { content: "m06", role: "assistant" }),
          event(3, "message_streamed", { delta: "m07", kind: "text" }),
          event(4, "message_received", { content: "m07", role: "assistant" }),
        ],
      );
      assert.equal(shown.match(/m06/g)?.length, 1, shown);
      assert.equal(shown.match(/m07/g)?.length, 1, shown);
      assert.ok(shown.endsWith("\n"), "every line is closed");
    });
  }
}

Deno.test("a renderer that replaces one whose message came whole still shows the next whole message", () => {
  const shown = renderAcrossSwitch(
    "compact",
    "studio",
    [event(1, "message_received", { content: "m01", role: "assistant" })],
    [event(2, "message_received", { content: "m02", role: "assistant" })],
  );
  assert.equal(shown, "msg m01\n\n  m02\n");
});

Deno.test("a tool call started under a replaced renderer is named, with its change, on the new renderer's finish line", () => {
  const shown = renderAcrossSwitch(
    "compact",
    "studio",
    [event(1, "tool_call_started", {
      tool_call_id: "t1",
      tool_name: "Edit",
      tool_input: { file_path: "a.md", old_string: "x", new_string: "y" },
    })],
    [event(2, "tool_call_completed", {
      tool_call_id: "t1",
      tool_output: "ok",
    })],
  );
  assert.equal(shown, "t+Edit a.md\n  ✓ Edited a.md  +1 \u22121\n");
});

Deno.test("studio shows a session failure once when it replaces a renderer that showed its error", () => {
  const shown = renderAcrossSwitch(
    "compact",
    "studio",
    [event(1, "error_occurred", {
      error_code: "boom",
      error_message: "it broke",
    })],
    [event(2, "run_failed", { error_message: "it broke" })],
  );
  assert.equal(shown, "! boom: it broke\n");
});

Deno.test("a fresh renderer's handover holds nothing", () => {
  for (const mode of MODES) {
    assert.deepEqual(
      createRenderer({ ...DEFAULT_VIEW, log_mode: mode }).handover(),
      { streamed: false, open_tools: {}, last_event: null },
    );
  }
});

const HOSTILE = "a\x07b\x1b]0;title\x07c\x1b[31md\x9b2Je\x7f";

for (const mode of MODES) {
  Deno.test(`the ${mode} renderer shows agent text without its escape sequences or controls, and styles it itself`, () => {
    const renderer = createRenderer({
      ...DEFAULT_VIEW,
      log_mode: mode,
      tool_output: "full",
    });
    const events = [
      event(1, "message_streamed", { delta: HOSTILE, kind: "thinking" }),
      event(2, "message_received", { content: HOSTILE, role: "assistant" }),
      event(3, "tool_call_started", {
        tool_call_id: "t",
        tool_name: "Bash",
        tool_input: { command: HOSTILE },
      }),
      event(4, "tool_call_completed", {
        tool_call_id: "t",
        tool_output: HOSTILE,
      }),
      event(5, "error_occurred", { error_message: HOSTILE }),
      event(6, "prompt_steered", {
        prompt_id: "01",
        text: HOSTILE,
        author: HOSTILE,
        delivery: "send_input",
      }),
      event(7, "prompt_failed", {
        prompt_id: "01",
        status: "failed",
        reason: HOSTILE,
      }),
    ];
    const out = events.map((e) => renderer.render(e)).join("") +
      renderer.finish();
    // The renderer's own styling is all that is left besides text.
    // deno-lint-ignore no-control-regex
    const unstyled = out.replace(/\x1b\[[0-9;]*m/g, "");
    // deno-lint-ignore no-control-regex
    assert.doesNotMatch(unstyled, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
    assert.ok(out.includes("abcde"), JSON.stringify(out));
    // The agent's SGR did not survive inside its text.
    assert.ok(!out.includes("c\x1b[31md"), JSON.stringify(out));
  });
}

Deno.test("Gemini's replace, a path-only change, names its file in every mode", () => {
  for (const mode of MODES) {
    const renderer = createRenderer({ ...DEFAULT_VIEW, log_mode: mode });
    const shown = stripAnsi(
      [
        event(1, "tool_call_started", {
          tool_call_id: "r1",
          tool_name: "replace",
          tool_input: {
            file_path: "notes/plan.md",
            old_string: "a",
            new_string: "b",
            instruction: "fix",
          },
        }),
        event(2, "tool_call_completed", {
          tool_call_id: "r1",
          tool_name: "replace",
          tool_output: "",
          is_error: false,
        }),
      ].map((e) => renderer.render(e)).join("") + renderer.finish(),
    );
    assert.match(shown, /plan\.md/, `${mode}: ${shown}`);
  }
});
