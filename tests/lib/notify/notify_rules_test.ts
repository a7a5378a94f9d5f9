import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPacket } from "../../../lib/packet/mod.ts";
import { parseNotifyRules } from "../../../lib/notify/notify_rules.ts";
import { notifyMoments, ruleMoment } from "../../../lib/notify/mod.ts";
import {
  maskWebhookUrl,
  notifyTarget,
} from "../../../lib/notify/notify_target.ts";
import { loadWorkspaceFile } from "../../../lib/workspace/workspace_file.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import type { RunEvent, RunStatus } from "../../../lib/shared/events.ts";
import type { NotifyRule } from "../../../lib/shared/notify_rule.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";
import { withWorkspaceDirs } from "../workspace/_fixture.ts";

const PROMPT = { "01_a.prompt.md": promptFile('id: "01"') };

Deno.test("loadPacket() reads notify: rules, resolving a relative program against the packet", async () => {
  await using packet = await makePacket({
    manifest: [
      "notify:",
      "  - {on: [failed, attention, failed], command: [./hooks/tell.sh, --loud]}",
      "  - {on: finished, webhook: 'https://hooks.example/x?token=s3cret', timeout_ms: 2000}",
      "  - {on: [completed], command: [notify-send, done]}",
    ].join("\n"),
    prompts: PROMPT,
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  const dir = await Deno.realPath(packet.dir);
  assert.deepEqual(loaded.notify, [
    {
      on: ["failed", "attention"],
      command: [join(dir, "hooks", "tell.sh"), "--loud"],
      timeout_ms: null,
      dir,
    },
    {
      on: ["finished"],
      webhook: "https://hooks.example/x?token=s3cret",
      timeout_ms: 2000,
      dir,
    },
    {
      on: ["completed"],
      command: ["notify-send", "done"],
      timeout_ms: null,
      dir,
    },
  ]);
});

Deno.test("a packet without notify: has no rules", async () => {
  await using packet = await makePacket({ prompts: PROMPT, git: false });
  assert.deepEqual((await loadPacket(packet.dir)).notify, []);
});

Deno.test("loadPacket() refuses each bad notify: value, naming the manifest and the key", async () => {
  const cases: [string, RegExp][] = [
    [
      "notify: {on: [failed], command: [x]}",
      /key "notify": expected a list of rules/,
    ],
    [
      "notify: [{on: [failed], comand: [x]}]",
      /unknown key "notify\[0\]\.comand"/,
    ],
    [
      "notify: [{on: [failed], command: []}]",
      /key "notify\[0\]\.command": expected an argv list \[program, args…\], not empty/,
    ],
    [
      "notify: [{on: [failed], command: 'mail -s x ops'}]",
      /key "notify\[0\]\.command": expected an argv list .*found a string; a shell command is \[sh, -c, "mail -s x ops"\]/,
    ],
    [
      "notify: [{on: [failed], command: ['', a]}]",
      /key "notify\[0\]\.command\[0\]": the program is empty/,
    ],
    [
      "notify: [{on: [failed], command: [sleep, 5]}]",
      /key "notify\[0\]\.command\[1\]": expected a string, found 5 \(quote numbers\)/,
    ],
    [
      "notify: [{on: [failed], webhook: 'ftp://user:pw@files.example/x'}]",
      /key "notify\[0\]\.webhook": expected an http:\/\/ or https:\/\/ URL, found a "ftp" URL/,
    ],
    [
      "notify: [{on: [failed], webhook: 'not a url'}]",
      /key "notify\[0\]\.webhook": expected an http:\/\/ or https:\/\/ URL, found no URL/,
    ],
    [
      "notify: [{on: [done], command: [x]}]",
      /key "notify\[0\]\.on": unknown name "done" \(allowed: attention, failed, completed, finished\)/,
    ],
    [
      "notify: [{command: [x]}]",
      /key "notify\[0\]\.on": a rule needs the moments it is for/,
    ],
    [
      "notify: [{on: [], command: [x]}]",
      /key "notify\[0\]\.on": a rule needs the moments/,
    ],
    [
      "notify: [{on: [failed], command: [x], webhook: 'https://h.example'}]",
      /key "notify\[0\]": give a command or a webhook, not both/,
    ],
    [
      "notify: [{on: [failed]}]",
      /key "notify\[0\]": a rule needs a command: \[argv…\] or a webhook: URL/,
    ],
    [
      "notify: [{on: [failed], command: [x], timeout_ms: 0}]",
      /key "notify\[0\]\.timeout_ms": expected a whole number of milliseconds from 1 to 600000, found 0/,
    ],
    [
      "notify: [{on: [failed], command: [x], timeout_ms: 1s}]",
      /key "notify\[0\]\.timeout_ms": expected a whole number.*found "1s"/,
    ],
    [
      "notify: [{on: [failed], command: [x]}, oops]",
      /key "notify\[1\]": expected a mapping/,
    ],
  ];
  for (const [manifest, expected] of cases) {
    await using packet = await makePacket({
      manifest,
      prompts: PROMPT,
      git: false,
    });
    const error = await loadPacket(packet.dir).then(
      () => assert.fail(`accepted: ${manifest}`),
      (error: unknown) => error,
    );
    assert.ok(error instanceof UsageError, `${manifest}: ${error}`);
    assert.equal(error.code, "INVALID_PACKET");
    assert.match(
      error.message,
      /^Invalid packet file ".*prompt_runner_packet\.md": /,
    );
    assert.match(error.message, expected, manifest);
  }
});

Deno.test("an unknown key of a notify: rule gets the packet's hint with the key it most likely meant", async () => {
  await using packet = await makePacket({
    manifest: "notify: [{on: [failed], webhok: 'https://h.example'}]",
    prompts: PROMPT,
    git: false,
  });
  const error = await loadPacket(packet.dir).catch((e: UsageError) => e);
  assert.ok(error instanceof UsageError);
  assert.match(
    error.hint ?? "",
    /Did you mean "notify\[0\]\.webhook"\? Known keys of notify\[0\]: on, command, webhook, timeout_ms/,
  );
});

Deno.test("loadWorkspaceFile() reads notify: beside the file, and names the file and key of a bad rule", async () => {
  await withWorkspaceDirs(async ({ root, env, write }) => {
    const file = await write(
      "workspace.yml",
      "id: ops\npacket: packet\nnotify:\n  - {on: [attention], command: [./page.sh]}\n",
    );
    const loaded = await loadWorkspaceFile(file, { cwd: root, env });
    assert.deepEqual(loaded.notify, [
      {
        on: ["attention"],
        command: [join(root, "page.sh")],
        timeout_ms: null,
        dir: root,
      },
    ]);
    const cases: [string, RegExp][] = [
      [
        "  - {on: [later], command: [x]}\n",
        /key "notify\[0\]\.on": unknown name "later"/,
      ],
      [
        "  - {on: [failed], command: [x], extra: 1}\n",
        /key "notify\[0\]\.extra": unknown key \(known keys of notify\[0\]: on, command, webhook, timeout_ms\)/,
      ],
      [
        "  - {on: [failed], webhook: 'file:///etc/passwd'}\n",
        /key "notify\[0\]\.webhook": expected an http:\/\/ or https:\/\/ URL, found a "file" URL/,
      ],
    ];
    for (const [rule, expected] of cases) {
      await write("workspace.yml", `id: ops\nnotify:\n${rule}`);
      const error = await loadWorkspaceFile(file, { cwd: root, env })
        .catch((e: unknown) => e);
      assert.ok(error instanceof UsageError, rule);
      assert.equal(error.code, "INVALID_WORKSPACE");
      assert.match(
        error.message,
        new RegExp(`^Invalid workspace file "${file.replaceAll("/", "\\/")}"`),
      );
      assert.match(error.message, expected, rule);
    }
  });
});

function finished(status: RunStatus): RunEvent {
  return {
    v: 1,
    seq: 7,
    at: "2026-01-01T00:00:00.000Z",
    run_id: "r1",
    prompt_id: null,
    attempt: null,
    type: "run_finished",
    data: { status, reason: null, prompts: {} },
  };
}

Deno.test("notifyMoments(): attention_needed is attention; run_finished is failed (failed, blocked) or completed, and always finished", () => {
  const attention: RunEvent = {
    ...finished("failed"),
    type: "attention_needed",
    data: { reason: "stalled", prompt_id: "01", attempt: 1, detail: "quiet" },
  };
  assert.deepEqual(notifyMoments(attention), ["attention"]);
  assert.deepEqual(notifyMoments(finished("failed")), ["failed", "finished"]);
  assert.deepEqual(notifyMoments(finished("blocked")), ["failed", "finished"]);
  assert.deepEqual(notifyMoments(finished("completed")), [
    "completed",
    "finished",
  ]);
  assert.deepEqual(notifyMoments(finished("interrupted")), ["finished"]);
  assert.deepEqual(
    notifyMoments({
      ...finished("failed"),
      type: "prompt_failed",
      data: { prompt_id: "01", status: "failed", reason: "x" },
    }),
    [],
  );
});

Deno.test("ruleMoment() fires a rule once per event, for the most specific moment it names", () => {
  const rule = (on: NotifyRule["on"]): NotifyRule => ({
    on,
    command: ["x"],
    timeout_ms: null,
    dir: "/",
  });
  assert.equal(
    ruleMoment(rule(["finished", "failed"]), ["failed", "finished"]),
    "failed",
  );
  assert.equal(
    ruleMoment(rule(["finished"]), ["completed", "finished"]),
    "finished",
  );
  assert.equal(ruleMoment(rule(["completed"]), ["failed", "finished"]), null);
});

Deno.test("maskWebhookUrl() drops the user info, the query and token-like path segments", () => {
  assert.equal(
    maskWebhookUrl(
      "https://u:pw@hooks.slack.com/services/T0123/B0456/aB3dE5gH7jK9mN1pQ3sT5vW7?x=1#f",
    ),
    "https://hooks.slack.com/services/T0123/B0456/…?…",
  );
  assert.equal(
    maskWebhookUrl("http://127.0.0.1:8080/hook"),
    "http://127.0.0.1:8080/hook",
  );
  assert.equal(
    notifyTarget({
      on: ["failed"],
      webhook: "https://h.example/p?token=abc",
      timeout_ms: null,
      dir: "/",
    }),
    "https://h.example/p?…",
  );
  assert.equal(
    notifyTarget({
      on: ["failed"],
      command: ["/usr/bin/mail", "-s", "x"],
      timeout_ms: null,
      dir: "/",
    }),
    "/usr/bin/mail",
  );
});

Deno.test("parseNotifyRules() reports through the caller's fail, and has no rules for null", () => {
  assert.deepEqual(
    parseNotifyRules(null, { dir: "/", fail: () => assert.fail() }),
    [],
  );
  assert.throws(
    () =>
      parseNotifyRules([{ on: ["x"] }], {
        dir: "/",
        fail: (key, detail) => {
          throw new Error(`${key} | ${detail}`);
        },
      }),
    /^Error: notify\[0\]\.on \| unknown name "x"/,
  );
});
