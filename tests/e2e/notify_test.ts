/**
 * Notifications from a real runner process: `notify:` rules of the packet
 * (and of a workspace) run their command and POST to a loopback webhook
 * when the run needs attention or ends, each outcome is a `notified` entry
 * of `control/log.jsonl`, and a webhook that never answers holds the run's
 * end no longer than the bounded grace.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";
import { webhookServer } from "../_helpers/webhook_server.ts";
import type { LogEntry } from "../../lib/control/log_entry.ts";

const COMPLETES = promptFile(`
verify: {files_exist: [HELLO.md]}
simulate: {attempts: [{writes: [{path: HELLO.md, text: hi}]}]}`);

// Never writes what its contract wants: the prompt, then the run, fails.
const FAILS = promptFile(`
verify: {files_exist: [NEVER.md]}
recovery: {repair: {enabled: false}}
simulate: {attempts: [{messages: ["not doing it"]}]}`);

/** A command rule that writes the event and its variables into `out`. */
function recorder(on: string, out: string): string {
  const script =
    'cat >> "$0/$PROMPT_RUNNER_EVENT.jsonl"; env | grep ^PROMPT_RUNNER_ | sort > "$0/$PROMPT_RUNNER_EVENT.env"';
  return `  - {on: ${on}, command: [sh, -c, '${script}', ${
    JSON.stringify(out)
  }]}`;
}

/**
 * Makes the folder the packet's recorder rules write into, and puts its path
 * in the manifest where the rules say "OUT".
 */
async function recorderOut(
  packet: { root: string; dir: string },
): Promise<string> {
  const out = join(packet.root, "out");
  await Deno.mkdir(out);
  const manifest = join(packet.dir, "prompt_runner_packet.md");
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest)).replace('"OUT"', JSON.stringify(out)),
  );
  return out;
}

async function jsonl(path: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(path);
  return text.trimEnd().split("\n").map((line) => JSON.parse(line));
}

async function notified(stateRoot: string): Promise<LogEntry[]> {
  const entries = await jsonl(join(stateRoot, "control", "log.jsonl"));
  return (entries as unknown as LogEntry[]).filter((e) =>
    e.command === "notified"
  );
}

Deno.test("a completed run notifies its command and webhook with the run_finished event, and logs each as notified", async () => {
  await using server = webhookServer(() => 200);
  await using packet = await makePacket({
    manifest: [
      "notify:",
      recorder("[completed, finished]", "OUT"),
      `  - {on: [finished], webhook: '${server.origin}/hook?token=s3cret'}`,
      "  - {on: [failed, attention], webhook: 'http://127.0.0.1:9/never'}",
    ].join("\n"),
    prompts: { "01_hello.prompt.md": COMPLETES },
  });
  const out = await recorderOut(packet);
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 0, result.stderr);
  const events = await jsonl(join(packet.stateRoot, "control", "events.jsonl"));
  const end = events.at(-1)!;
  assert.equal(end.type, "run_finished");
  // The command got the event on stdin, once, as the moment it names first.
  assert.deepEqual(await jsonl(join(out, "completed.jsonl")), [end]);
  const env = (await Deno.readTextFile(join(out, "completed.env"))).split("\n");
  const root = await Deno.realPath(packet.stateRoot);
  for (
    const line of [
      "PROMPT_RUNNER_EVENT=completed",
      "PROMPT_RUNNER_EVENT_TYPE=run_finished",
      `PROMPT_RUNNER_RUN_ID=${end.run_id}`,
      `PROMPT_RUNNER_SEQ=${end.seq}`,
      `PROMPT_RUNNER_STATE_ROOT=${root}`,
      "PROMPT_RUNNER_PACKET=test-packet",
      "PROMPT_RUNNER_STATUS=completed",
    ]
  ) assert.ok(env.includes(line), `${line} in ${env.join(" ")}`);
  assert.ok(!env.some((line) => line.startsWith("PROMPT_RUNNER_REASON=")));
  // The webhook got it as a JSON POST.
  assert.equal(server.requests.length, 1);
  assert.equal(server.requests[0]!.headers["content-type"], "application/json");
  assert.deepEqual(JSON.parse(server.requests[0]!.body), end);
  // Each delivery is in the audit log; the rule for failed was not fired.
  const entries = await notified(packet.stateRoot);
  assert.deepEqual(
    entries.map((
      e,
    ) => [
      e.params.on,
      e.params.target,
      e.params.seq,
      e.params.type,
      e.outcome,
      e.author,
    ]).sort(),
    [
      ["completed", "sh", end.seq, "run_finished", "applied", "runner"],
      [
        "finished",
        `${server.origin}/hook?…`,
        end.seq,
        "run_finished",
        "applied",
        "runner",
      ],
    ],
  );
  assert.ok(entries.every((e) => e.run_id === end.run_id));
  assert.ok(
    !(await Deno.readTextFile(join(packet.stateRoot, "control", "log.jsonl")))
      .includes("s3cret"),
  );
});

Deno.test("a failed run notifies attention and failed; a webhook that never answers holds its end only for the grace", async () => {
  await using server = webhookServer(() => "hang");
  await using packet = await makePacket({
    manifest: [
      "notify:",
      recorder("[attention, failed, finished]", "OUT"),
      `  - {on: [failed], webhook: '${server.origin}/slow', timeout_ms: 60000}`,
    ].join("\n"),
    prompts: { "01_fails.prompt.md": FAILS },
  });
  const out = await recorderOut(packet);
  const result = await runCli(["run", packet.dir]);
  assert.equal(result.code, 1, result.stderr);
  const events = await jsonl(join(packet.stateRoot, "control", "events.jsonl"));
  const end = events.at(-1)!;
  assert.equal((end.data as { status: string }).status, "failed");
  const attention = events.filter((e) => e.type === "attention_needed");
  assert.ok(attention.length > 0, "the failure raised attention_needed");
  assert.deepEqual(await jsonl(join(out, "attention.jsonl")), attention);
  assert.deepEqual(await jsonl(join(out, "failed.jsonl")), [end]);
  const attentionEnv = await Deno.readTextFile(join(out, "attention.env"));
  assert.match(attentionEnv, /^PROMPT_RUNNER_PROMPT_ID=01$/m);
  assert.match(attentionEnv, /^PROMPT_RUNNER_REASON=failed$/m);
  const failedEnv = await Deno.readTextFile(join(out, "failed.env"));
  assert.match(failedEnv, /^PROMPT_RUNNER_STATUS=failed$/m);
  assert.ok(
    failedEnv.split("\n").includes(
      `PROMPT_RUNNER_REASON=${(end.data as { reason: string }).reason}`,
    ),
  );
  // The webhook was still holding its request when the runner gave up on it
  // (its own limit is a minute): the run ended after the grace, not after it.
  assert.equal(server.requests.length, 1);
  const entries = await notified(packet.stateRoot);
  const hook = entries.find((e) => e.params.target === `${server.origin}/slow`);
  assert.ok(hook, JSON.stringify(entries));
  assert.equal(hook.outcome, "rejected");
  assert.match(
    hook.reason ?? "",
    /^the run ended and the 3000 ms grace for deliveries passed; last: /,
  );
  assert.match(
    result.stderr,
    /warning: control plane: notify: a notification to http:\/\/127\.0\.0\.1:\d+\/slow failed/,
  );
  const commands = entries.filter((e) => e.params.target === "sh");
  assert.deepEqual(
    commands.map((e) => [e.params.on, e.outcome]).sort(),
    [...attention.map(() => ["attention", "applied"]), ["failed", "applied"]]
      .sort(),
  );
});

Deno.test("a workspace's notify: rules apply in addition to the packet's", async () => {
  await using packet = await makePacket({
    manifest: ["notify:", recorder("[completed]", "PACKET_OUT")].join("\n"),
    prompts: { "01_hello.prompt.md": COMPLETES },
  });
  const packetOut = join(packet.root, "packet_out");
  const workspaceOut = join(packet.root, "workspace_out");
  await Deno.mkdir(packetOut);
  await Deno.mkdir(workspaceOut);
  const manifest = join(packet.dir, "prompt_runner_packet.md");
  await Deno.writeTextFile(
    manifest,
    (await Deno.readTextFile(manifest)).replace(
      '"PACKET_OUT"',
      JSON.stringify(packetOut),
    ),
  );
  const file = join(packet.root, "workspace.yml");
  await Deno.writeTextFile(
    file,
    [
      "id: notify-ws",
      "packet: packet",
      `state_root: ${join(packet.root, "ws_state")}`,
      "notify:",
      recorder("[finished]", workspaceOut),
      "",
    ].join("\n"),
  );
  const env = { XDG_STATE_HOME: join(packet.root, "state_home") };
  const result = await runCli(["run", "--workspace", file], { env });
  assert.equal(result.code, 0, result.stderr);
  const stateRoot = join(packet.root, "ws_state");
  const end = (await jsonl(join(stateRoot, "control", "events.jsonl"))).at(-1)!;
  assert.deepEqual(await jsonl(join(packetOut, "completed.jsonl")), [end]);
  assert.deepEqual(await jsonl(join(workspaceOut, "finished.jsonl")), [end]);
  const entries = await notified(stateRoot);
  assert.deepEqual(entries.map((e) => [e.params.on, e.outcome]).sort(), [
    ["completed", "applied"],
    ["finished", "applied"],
  ]);
});
