import assert from "node:assert/strict";
import { chainHtml } from "../../commands/serve/_chain_panel.ts";
import type { LogVerification } from "../../mod.ts";

function verification(
  overrides: Partial<LogVerification> = {},
): LogVerification {
  return {
    state_root: "/s",
    holds: true,
    files: [{ file: "control/log.jsonl", lines: 4, holds: true }],
    receipts: 2,
    amendments: 1,
    problems: [],
    notes: [],
    ...overrides,
  };
}

Deno.test("chainHtml() says the chain holds, and counts torn lines apart, as not tampering", () => {
  assert.equal(
    chainHtml(verification()),
    '<p class="chain" data-chain="holds" title="control log --verify">✓ The audit chain holds: 4 lines, 2 receipts, 1 amendment checked</p>',
  );
  const torn = chainHtml(verification({
    notes: [{
      kind: "torn",
      problem: false,
      file: "control/log.jsonl",
      line: 5,
      message: "line 5 is torn",
    }],
  }));
  assert.match(torn, /· 1 torn line \(a crash mid-write, not tampering\)</);
});

Deno.test("chainHtml() names the first line that does not hold, with its text escaped, and nothing for a fleet run", () => {
  const html = chainHtml(verification({
    holds: false,
    problems: [{
      kind: "edited",
      problem: true,
      file: "control/log.jsonl",
      line: 3,
      message: 'line 3 says <script>alert("x")</script>',
    }, {
      kind: "receipt_unlogged",
      problem: true,
      file: "control/outcomes/r.json",
      line: null,
      message: "gone",
    }],
  }));
  assert.match(
    html,
    /^<p class="chain" data-chain="broken" data-file="control\/log.jsonl" data-line="3" data-kind="edited"/,
  );
  assert.match(
    html,
    /control\/log\.jsonl line 3 \(edited\): line 3 says &lt;script&gt;/,
  );
  assert.doesNotMatch(html, /<script>/);
  assert.match(html, /· 1 more problem<\/p>$/);
  assert.equal(chainHtml(null), "");
});
