/**
 * The tamper-evident audit trail across processes: a real run steered,
 * viewed and amended by CLI clients at once chains every line of its log
 * and amendments, `control log --verify` says so, and names the first line
 * that does not hold once one is edited, removed or moved; a torn line (a
 * crash mid-write) is reported apart, as torn.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { type CliResult, runCli } from "../_helpers/run_cli.ts";
import {
  longPrompt,
  makePacket,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

/** Runs `control amend` for prompt 01 (adds a contains clause). */
async function amend(target: string, reason: string): Promise<void> {
  const result = await runCli([
    "control",
    "amend",
    target,
    "01",
    "--add-contains",
    `README.md=${reason}`,
    "--reason",
    reason,
  ]);
  assert.equal(result.code, 0, result.stderr);
}

/**
 * A packet whose run was viewed, steered and amended by several CLI
 * processes at once while it ran, then finished.
 */
async function steeredRun(): Promise<TempPacket> {
  const packet = await makePacket({
    prompts: {
      "01_long.prompt.md": longPrompt(
        50,
        30,
        "recovery: {repair: {enabled: false}}",
      ),
    },
    files: { "README.md": "hello\n" },
  });
  const run = startRun(packet.dir);
  await run.until((e) => e.type === "tool_call_started");
  const sent = await Promise.all([
    runCli(["control", "view", packet.dir, "--thinking", "hide"]),
    runCli(["control", "view", packet.dir, "--diff", "full"]),
    runCli(["control", "steer", packet.dir, "keep", "it", "short"]),
    runCli(["control", "steer", packet.dir, "mind", "the", "tests"]),
    amend(packet.dir, "one").then(() => ({ code: 0, stderr: "" })),
    amend(packet.dir, "two").then(() => ({ code: 0, stderr: "" })),
  ]);
  for (const result of sent) assert.equal(result.code, 0, result.stderr);
  const done = await run.finish();
  assert.ok([0, 1].includes(done.code), done.stderr);
  return packet;
}

/** `control log --verify TARGET [--json]`. */
async function verify(target: string, json = false): Promise<CliResult> {
  return await runCli([
    "control",
    "log",
    target,
    "--verify",
    ...(json ? ["--json"] : []),
  ]);
}

/** Copies a directory with everything in it (`cp -a`). */
async function copy(from: string, to: string): Promise<void> {
  const done = await new Deno.Command("cp", { args: ["-a", from, to] })
    .output();
  assert.equal(done.code, 0, new TextDecoder().decode(done.stderr));
}

/** A copy of the packet's state root with one of its files edited. */
async function damaged(
  packet: TempPacket,
  name: string,
  edit: (lines: string[]) => string[],
  file = join("control", "log.jsonl"),
): Promise<string> {
  const root = join(packet.root, name);
  await copy(packet.stateRoot, root);
  const path = join(root, file);
  const lines = (await Deno.readTextFile(path)).split("\n");
  lines.pop();
  await Deno.writeTextFile(path, edit(lines).join("\n") + "\n");
  return root;
}

Deno.test("control log --verify exits 0 on a run steered, viewed and amended by several processes at once, and every line carries prev", async () => {
  await using packet = await steeredRun();
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  assert.ok(log.length >= 8, JSON.stringify(log));
  for (const entry of log) assert.match(String(entry.prev), /^[0-9a-f]{64}$/);
  const amendments = await readJsonl(
    join(packet.stateRoot, "amendments", "01.jsonl"),
  );
  assert.equal(amendments.length, 2);
  for (const record of amendments) {
    assert.match(String(record.prev), /^[0-9a-f]{64}$/);
  }

  const result = await verify(packet.dir);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(
      `^control/log.jsonl: ${log.length} lines, the chain holds$`,
      "m",
    ),
  );
  assert.match(
    result.stdout,
    /^amendments\/01.jsonl: 2 lines, the chain holds$/m,
  );
  assert.match(result.stdout, /^control\/outcomes: 4 receipts checked/m);
  assert.match(result.stdout, /^the audit trail holds$/m);
  assert.equal(result.stderr, "");

  const json = await verify(packet.dir, true);
  assert.equal(json.code, 0, json.stderr);
  const lines = json.stdout.trimEnd().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.length, 1);
  assert.equal(lines[0].type, "verdict");
  assert.equal(lines[0].holds, true);
  assert.equal(lines[0].receipts, 4);
  assert.equal(lines[0].amendments, 2);
});

Deno.test("control log --verify exits 1 naming the line of an edited entry, a removed entry, a swapped pair and an amendment edited by hand", async () => {
  await using packet = await steeredRun();
  const log = await readJsonl(join(packet.stateRoot, "control", "log.jsonl"));
  const views = log.flatMap((e, i) => e.command === "set_view" ? [i] : []);
  const view = views[0]!;
  const line = view + 1;

  // An applied view said rejected: its receipt says otherwise.
  const edited = await damaged(packet, "edited", (lines) => {
    lines[view] = lines[view]!.replace(
      '"outcome":"applied"',
      '"outcome":"rejected"',
    );
    return lines;
  });
  let result = await verify(edited);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(`^control/log.jsonl line ${line}: edited: `, "m"),
  );
  assert.match(
    result.stdout,
    new RegExp(
      `^the audit trail does not hold: .*control/log.jsonl line ${line} \\(edited\\)$`,
      "m",
    ),
  );

  // An author changed, which nothing but the chain vouches for.
  const author = await damaged(packet, "author", (lines) => {
    lines[view] = lines[view]!.replace(
      /"author":"[^"]*"/,
      '"author":"mallory"',
    );
    return lines;
  });
  result = await verify(author);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(
      `^control/log.jsonl line ${line}: edited_or_removed: line ${line} does not hold: line ${
        line + 1
      }'s prev is not its hash`,
      "m",
    ),
  );

  const removed = await damaged(
    packet,
    "removed",
    (lines) => lines.toSpliced(view, 1),
  );
  result = await verify(removed);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(
      `^control/log.jsonl line ${line}: removed: a line was removed before line ${line}`,
      "m",
    ),
  );
  assert.match(
    result.stdout,
    /: receipt_unlogged: receipt \S+ \(applied\) has no log line/,
  );

  const swapped = await damaged(packet, "swapped", (lines) => [
    ...lines.slice(0, view),
    lines[view + 1]!,
    lines[view]!,
    ...lines.slice(view + 2),
  ]);
  result = await verify(swapped, true);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  const findings = result.stdout.trimEnd().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(
    [findings[0].type, findings[0].kind, findings[0].file, findings[0].line],
    ["finding", "reordered", "control/log.jsonl", line],
  );
  assert.equal(findings.at(-1).type, "verdict");
  assert.equal(findings.at(-1).holds, false);

  const amended = await damaged(
    packet,
    "amended",
    (lines) => {
      lines[0] = lines[0]!.replace(/"reason":"\w+"/, '"reason":"forged"');
      return lines;
    },
    join("amendments", "01.jsonl"),
  );
  result = await verify(amended);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.match(result.stdout, /^amendments\/01.jsonl line 1: edited: /m);
  assert.match(
    result.stdout,
    /^amendments\/01.jsonl: 2 lines, the chain does not hold$/m,
  );
});

Deno.test("control log --verify reports a torn last line, and a torn line a later client wrote past, as torn and exits 0", async () => {
  await using packet = await steeredRun();
  const path = join(packet.stateRoot, "control", "log.jsonl");
  const count = (await readJsonl(path)).length;
  await Deno.writeTextFile(path, '{"v":1,"at":"2026-12-0', { append: true });
  let result = await verify(packet.dir);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    new RegExp(`^note: control/log.jsonl line ${count + 1}: torn: `, "m"),
  );
  assert.match(result.stdout, /^the audit trail holds$/m);

  // A client appends after the crash: its line ends the torn one and chains round it.
  await amend(packet.dir, "three");
  result = await verify(packet.dir, true);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const [torn, verdict] = result.stdout.trimEnd().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(
    [torn.kind, torn.problem, torn.line],
    ["torn", false, count + 1],
  );
  assert.equal(verdict.holds, true);
  assert.deepEqual(verdict.files[0], {
    file: "control/log.jsonl",
    lines: count + 2,
    holds: true,
  });
});

Deno.test("control log --verify takes no --follow (exit 2), and exits 3 for a packet never run", async () => {
  await using packet = await makePacket({
    prompts: { "01_quick.prompt.md": longPrompt(1, 0) },
  });
  const both = await runCli([
    "control",
    "log",
    packet.dir,
    "--verify",
    "--follow",
  ]);
  assert.equal(both.code, 2);
  assert.match(
    both.stderr,
    /^error: --verify checks the log once: it takes no --follow/m,
  );
  const never = await verify(packet.dir);
  assert.equal(never.code, 3, never.stderr);
  assert.match(never.stderr, /^error: No state root at ".*\.prompt_runner"/m);
  const help = await runCli(["control", "log", "--help"]);
  assert.match(help.stdout, /--verify +Check the audit trail/);
});
