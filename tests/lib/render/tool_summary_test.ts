import assert from "node:assert/strict";
import { toolKind, toolStartText } from "../../../lib/render/tool_summary.ts";

Deno.test("toolKind() words an ACP agent's tool kinds like the CLIs' own tools", () => {
  assert.deepEqual(
    ["execute", "search", "read", "edit", "delete", "move", "think"].map(
      toolKind,
    ),
    ["bash", "grep", "read", "edit", "file_change", "file_change", "other"],
  );
});

Deno.test("an ACP execute call reads as the command it runs", () => {
  const text = toolStartText("execute", { command: "git status" });
  assert.match(text, /git status/);
  assert.doesNotMatch(text, /execute/);
});
