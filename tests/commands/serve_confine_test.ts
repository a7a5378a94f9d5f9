/**
 * The dashboard's actions have no power a control command lacks (issue
 * 19): each runs in a worker confined to its run exactly as `control
 * steer`, `view`, `amend` and `relax` are, with the same link refusals. A
 * real `serve` process and `fetch`: amend and relax "also write it into
 * the prompt file" refuse a prompt file or a `prompts/` that is a link out
 * of the packet, a path that leaves the run by name is stopped by the
 * runtime, and without `--unstable-worker-options` nothing runs
 * unconfined.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { readJsonl, readSnapshot } from "../_helpers/live_run.ts";
import {
  CLI_PERMISSIONS,
  cliEnv,
  FAULT_MAIN,
  MAIN,
  runCli,
} from "../_helpers/run_cli.ts";
import {
  linkOutOfPacket,
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

const NOTES = promptFile(`verify: {files_exist: [NOTES.md]}
simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}`);

/** An action's JSON answer. */
interface Answer {
  status: number;
  body: { outcome: string; reason: string };
}

/** A `serve` process, and a way to post its forms as the dashboard does. */
interface Served extends AsyncDisposable {
  /** Posts an action's form to the run and reads the JSON answer. */
  post(action: string, fields: Record<string, string>): Promise<Answer>;
}

/** The RootKey of a state root that is not a workspace's. */
async function rootKey(stateRoot: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(stateRoot),
  );
  return "r-" +
    [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0"))
      .join("").slice(0, 12);
}

/**
 * Starts `serve PACKET` with `flags` for the runtime (the CLI's own by
 * default) and trades the printed token for the cookie.
 */
async function serve(
  packet: TempPacket,
  runId: string,
  options: { fault?: string; flags?: readonly string[] } = {},
): Promise<Served> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...(options.flags ?? CLI_PERMISSIONS),
      options.fault === undefined ? MAIN : FAULT_MAIN,
      "serve",
      packet.dir,
      "--author",
      "ada",
    ],
    env: cliEnv(options),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines = new LineReader(child.stdout);
  const stderr = readAll(child.stderr);
  const stop = async (): Promise<void> => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Gone already.
    }
    await lines.rest();
    await child.status;
    await stderr;
  };
  const first = await lines.next();
  const match = /^dashboard: (http:\/\/[^/]+)\/\?token=([\w-]+)$/.exec(
    first ?? "",
  );
  if (match === null) {
    await stop();
    throw new Error(`no URL line: ${first}\n${await stderr}`);
  }
  const origin = match[1]!;
  const login = await fetch(`${origin}/?token=${match[2]}`, {
    redirect: "manual",
  });
  await login.body?.cancel();
  const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0]!;
  assert.match(cookie, /=/, "the dashboard set its token cookie");
  const base = `${origin}/run/${await rootKey(packet.stateRoot)}/${runId}`;
  return {
    async post(action, fields): Promise<Answer> {
      const response = await fetch(`${base}/${action}`, {
        method: "POST",
        headers: {
          cookie,
          origin,
          accept: "application/json",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams(fields).toString(),
      });
      const text = await response.text();
      return { status: response.status, body: JSON.parse(text) };
    },
    [Symbol.asyncDispose]: stop,
  };
}

/** A packet whose prompt ran to completion, and the run's id. */
async function ranPacket(): Promise<{ packet: TempPacket; runId: string }> {
  const packet = await makePacket({
    prompts: { "01_notes.prompt.md": NOTES },
  });
  const run = await runCli(["run", packet.dir]);
  assert.equal(run.code, 0, run.stderr);
  const snapshot = await readSnapshot(packet.stateRoot);
  return { packet, runId: String(snapshot?.run_id) };
}

/** The amend and relax forms, with "also write it into the prompt file". */
const PERSISTED = [
  [
    "amend",
    {
      prompt: "01",
      clause: "files_exist",
      value: "X.md",
      reason: "needed",
      persist: "on",
    },
  ],
  [
    "relax",
    {
      prompt: "01",
      clause: "files_exist",
      reason: "not needed",
      confirm: "on",
      persist: "on",
    },
  ],
] as const;

const LINK_REFUSED =
  /^Refused to use ".*": it is a link, and prompt_runner reads a packet's manifest, prompt directory and prompt files only inside the packet, never through a link$/;

const NAMES = {
  prompt: "a prompt file",
  prompts: "a prompts/ directory",
} as const;

for (const part of ["prompt", "prompts"] as const) {
  Deno.test(
    `the dashboard's amend and relax with "also write it into the prompt file" refuse ${
      NAMES[part]
    } that is a link out of the packet (409, as control amend --persist exits 4): the file it leads to and the link are untouched, nothing is recorded`,
    async () => {
      const { packet, runId } = await ranPacket();
      await using _ = packet;
      const { link, outside } = await linkOutOfPacket(packet, part);
      const before = await Deno.readTextFile(outside);
      await using served = await serve(packet, runId);
      for (const [action, fields] of PERSISTED) {
        const answer = await served.post(action, fields);
        assert.equal(answer.status, 409, JSON.stringify(answer.body));
        assert.equal(answer.body.outcome, "refused");
        assert.match(answer.body.reason, LINK_REFUSED, action);
      }
      assert.equal(await Deno.readTextFile(outside), before);
      assert.ok((await Deno.lstat(link)).isSymlink, "the link was replaced");
      assert.deepEqual(
        await readJsonl(join(packet.stateRoot, "amendments", "01.jsonl")),
        [],
      );
      const cli = await runCli([
        "control",
        "amend",
        packet.dir,
        "01",
        "--add-file",
        "X.md",
        "--reason",
        "needed",
        "--persist",
      ]);
      assert.equal(cli.code, 4, cli.stderr);
      assert.match(
        cli.stderr,
        new RegExp(`^error: ${LINK_REFUSED.source.slice(1, -1)}\n`),
      );
    },
  );
}

Deno.test(`the dashboard's amend with "also write it into the prompt file" still writes the prompt file in the packet, from its confined worker`, async () => {
  const { packet, runId } = await ranPacket();
  await using _ = packet;
  await using served = await serve(packet, runId);
  const answer = await served.post(...PERSISTED[0]);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  assert.equal(answer.body.outcome, "recorded");
  assert.match(
    await Deno.readTextFile(join(packet.dir, "prompts", "01_notes.prompt.md")),
    /files_exist:\n {4}- NOTES\.md\n {4}- X\.md\n/,
  );
  const [record] = await readJsonl(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  assert.equal(record?.author, "web:ada");
  assert.equal(record?.persisted, true);
});

Deno.test("every dashboard action made to write outside its run by name is stopped by the runtime, as the control commands are: 409 naming the refusal, the canary untouched", async () => {
  const { packet, runId } = await ranPacket();
  await using _ = packet;
  const canary = join(packet.root, "canary");
  await Deno.mkdir(canary);
  // The state root is PACKET/.prompt_runner: ../../canary leaves it by name.
  await using served = await serve(packet, runId, {
    fault: "control_escape:../../canary/escaped.txt",
  });
  const forms = [
    ["steer", { text: "keep going" }],
    ["view", { thinking: "hide" }],
    ["amend", {
      prompt: "01",
      clause: "files_exist",
      value: "X.md",
      reason: "needed",
    }],
    ["relax", {
      prompt: "01",
      clause: "files_exist",
      reason: "not needed",
      confirm: "on",
    }],
    ...PERSISTED,
  ] as const;
  for (const [action, fields] of forms) {
    const answer = await served.post(action, fields);
    assert.equal(answer.status, 409, `${action}: ${JSON.stringify(answer)}`);
    assert.match(
      answer.body.reason,
      /^Refused to reach a path outside the run's state root and packet: Requires write access to ".*\/canary\/escaped\.txt"/,
      action,
    );
  }
  assert.deepEqual(await Array.fromAsync(Deno.readDir(canary)), []);
  assert.deepEqual(
    await readJsonl(join(packet.stateRoot, "amendments", "01.jsonl")),
    [],
  );
});

Deno.test("a dashboard started without --unstable-worker-options refuses every action (409 naming the flag) instead of running it unconfined", async () => {
  const { packet, runId } = await ranPacket();
  await using _ = packet;
  await using served = await serve(packet, runId, {
    flags: CLI_PERMISSIONS.filter((flag) =>
      flag !== "--unstable-worker-options"
    ),
  });
  const answer = await served.post("amend", {
    prompt: "01",
    clause: "files_exist",
    value: "X.md",
    reason: "needed",
  });
  assert.equal(answer.status, 409, JSON.stringify(answer.body));
  assert.equal(
    answer.body.reason,
    'Cannot confine web action "amend" to its state root: the runtime was started without --unstable-worker-options',
  );
  assert.deepEqual(
    await readJsonl(join(packet.stateRoot, "amendments", "01.jsonl")),
    [],
  );
});
