/**
 * `prompt_runner status fleet:…` (issue 21): a real runner publishes to a
 * real nats-server, and a client process that cannot read the run's state
 * root reports on it from the fleet alone. Its rollup is the one `status
 * PACKET` prints of the same run on files, field by field where both can
 * know it: live, once its runner is killed, and once it is resumed and
 * finished.
 */

import assert from "node:assert/strict";
import { NATS_SERVER, NatsServers } from "../_helpers/nats.ts";
import { type LiveRun, startRun } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import type { StatusRollup } from "../../lib/status/mod.ts";
import {
  longPrompt,
  makePacket,
  promptFile,
  type TempPacket,
} from "../_helpers/temp_packet.ts";

const ignore = NATS_SERVER === null;

type Rollup = StatusRollup;

/** A client that may not read the packet or its state root. */
function blind(packet: TempPacket): { denoFlags: string[] } {
  return { denoFlags: [`--deny-read=${packet.root}`] };
}

/** Every key of a value, nested, as paths (the rollup's shape). */
function shape(value: unknown, at = ""): string[] {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return [at];
  }
  return Object.entries(value).flatMap(([key, inner]) =>
    shape(inner, `${at}.${key}`)
  );
}

/** What `status` on files and on the fleet both know of a run. */
function known(r: Rollup): Record<string, unknown> {
  const { elapsed_ms: _e, ...run } = r.run;
  const { last_event_age_ms: _a, ...provider } = r.provider;
  return {
    run,
    progress: r.progress,
    attempt: r.attempt,
    verifier: r.verifier,
    provider,
    steers: r.steers,
    amendments: r.amendments,
    service: r.service,
    lease: r.lease,
  };
}

async function filesStatus(packet: TempPacket): Promise<Rollup> {
  const result = await runCli(["status", packet.dir, "--json"]);
  assert.equal(result.code, 0, result.stderr);
  return JSON.parse(result.stdout);
}

async function fleetStatus(
  target: string,
  fleet: string,
  packet: TempPacket,
): Promise<Rollup> {
  const result = await runCli(
    ["status", target, "--fleet", fleet, "--json"],
    blind(packet),
  );
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, "");
  const lines = result.stdout.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, "one object, one line");
  return JSON.parse(lines[0]!);
}

/** Waits until the fleet's rollup satisfies `done`. */
async function fleetStatusWhen(
  what: string,
  target: string,
  fleet: string,
  packet: TempPacket,
  done: (r: Rollup) => boolean,
): Promise<Rollup> {
  return await waitFor(what, async () => {
    const r = await fleetStatus(target, fleet, packet);
    return done(r) ? r : null;
  }, 60_000);
}

/** Asserts the fleet's rollup is the files' where both can know it. */
function assertSame(fleetRollup: Rollup, filesRollup: Rollup): void {
  assert.deepEqual(shape(fleetRollup), shape(filesRollup), "every field");
  assert.deepEqual(known(fleetRollup), known(filesRollup));
  assert.equal(typeof fleetRollup.run.elapsed_ms, "number");
  assert.equal(typeof fleetRollup.provider.last_event_age_ms, "number");
}

/** The report's prompt lines: what follows its blank line. */
function promptSection(stdout: string): string {
  return stdout.split("\n\n")[1] ?? "";
}

/** The report's row for a label. */
function reportRow(stdout: string, label: string): string {
  return stdout.split("\n").find((line) =>
    line.startsWith(`  ${label.padEnd(11)} `)
  ) ?? "";
}

/** A terminal control character (C0 but tab and newline, DEL, C1). */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** A prompt whose name and failure carry terminal controls. */
const EVIL = promptFile(`name: "Evil\\a\\e]0;pwn\\a\\e[31mName"
recovery: {retry: {max_attempts: 0}, repair: {enabled: false}}
simulate:
  attempts:
    - error: {kind: provider_auth_claim, message: "denied\\a\\e]0;pwn\\a\\e[31mx"}`);

/** A prompt done at once. */
const QUICK = promptFile(`simulate:
  attempts:
    - messages: ["done"]`);

/** 02 fails its verification, and its repair waits (until it is killed). */
const STALLED = promptFile(`verify: {files_exist: [OUT.md]}
simulate:
  attempts:
    - usage: {input_tokens: 7, output_tokens: 3, cost_usd: 0.5}
    - delay_ms: 600000
      messages: ["never"]`);

/** 02 as the resumed run finds it: its first attempt does the work. */
const FIXED = promptFile(`verify: {files_exist: [OUT.md]}
simulate:
  attempts:
    - writes: [{path: OUT.md, text: done}]
      usage: {input_tokens: 11, output_tokens: 4, cost_usd: 0.25}`);

Deno.test({
  name:
    "status fleet:RUN --json is status PACKET --json of the same run, from a client that cannot read its state root: live, once its runner is killed (runner_gone, the fleet's silence named), and once resumed and finished",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const fleet = servers.url();
    await using packet = await makePacket({
      prompts: {
        "01_steered.prompt.md": longPrompt(30, 40),
        "02_repaired.prompt.md": STALLED,
      },
    });
    const amend = await runCli([
      "control",
      "amend",
      packet.dir,
      "01",
      "--add-command",
      "true",
      "--reason",
      "it must build",
      "--author",
      "bob",
    ]);
    assert.equal(amend.code, 0, amend.stderr);
    const fleetFlags = ["--fleet", fleet, "--fleet-node", "m1"];
    let runner: LiveRun = startRun(packet.dir, [
      ...fleetFlags,
      "--run-id",
      "run-s",
    ]);
    try {
      await runner.until((e) => e.type === "prompt_started");
      const steer = await runCli([
        "control",
        "steer",
        packet.dir,
        "keep",
        "it",
        "short",
        "--author",
        "alice",
      ]);
      assert.equal(steer.code, 0, steer.stderr);
      await runner.until((e) => e.type === "prompt_steered");
      await runner.until((e) =>
        e.type === "prompt_started" && e.prompt_id === "02" &&
        (e.data as { attempt: number }).attempt === 2
      );

      // Live: the repair waits, so files and fleet hold still.
      const live = await fleetStatusWhen(
        "the fleet's rollup of the repair",
        "fleet:run-s",
        fleet,
        packet,
        // The repair's attempt replayed from its events, not only the snapshot.
        (r) =>
          r.attempt.number === 2 &&
          r.attempt.detail === "repair after 1 unmet item" &&
          r.steers.count === 1 && r.amendments.count === 1,
      );
      const address = live.target;
      assert.match(address, /^fleet:m1\/r-[0-9a-f]{12}\/run-s$/);
      assert.equal(live.state_root, address);
      assert.equal(live.workspace_id, null);
      const files = await filesStatus(packet);
      assertSame(await fleetStatus(address, fleet, packet), files);
      assert.deepEqual(
        [live.run.status, live.lease.state, live.progress.completed],
        ["running", "alive", 1],
      );
      assert.deepEqual(
        [live.attempt.mode, live.verifier.passed, live.provider.cost_usd],
        ["repair", false, 0.5],
      );

      const human = await runCli(
        ["status", "fleet:run-s", "--fleet", fleet],
        blind(packet),
      );
      assert.equal(human.code, 0, human.stderr);
      assert.equal(human.stderr, "");
      const onFiles = await runCli(["status", packet.dir]);
      assert.match(human.stdout, /^test-packet {2}running\n/);
      assert.equal(
        reportRow(human.stdout, "fleet run"),
        `  fleet run   ${address}`,
      );
      for (const label of ["progress", "attempt", "verifier", "steers"]) {
        assert.equal(
          reportRow(human.stdout, label),
          reportRow(onFiles.stdout, label),
          label,
        );
      }
      assert.match(
        reportRow(human.stdout, "runner"),
        /^ {2}runner {6}pid \d+ on \S+, alive \(the fleet hears from it\)$/,
      );
      assert.equal(promptSection(human.stdout), promptSection(onFiles.stdout));
      assert.match(
        promptSection(human.stdout),
        /^ {2}01 {2}completed +Steered +1 attempt: run +verify: pass 1\/1\n {2}02 {2}running +Repaired +2 attempts: run, repair +verify: fail 0\/1\n$/,
      );

      // Killed: on files its lease is gone; the fleet stops hearing from it.
      runner.child.kill("SIGKILL");
      await runner.finish();
      const gone = await fleetStatusWhen(
        "the fleet to read the killed run as runner_gone",
        "fleet:run-s",
        fleet,
        packet,
        (r) => r.run.status === "runner_gone",
      );
      assert.deepEqual(gone.lease.state, "gone");
      assertSame(gone, await filesStatus(packet));
      const silent = await runCli(
        ["status", "fleet:run-s", "--fleet", fleet],
        blind(packet),
      );
      assert.equal(silent.code, 0, silent.stderr);
      assert.match(silent.stdout, /^test-packet {2}runner gone\n/);
      assert.match(
        reportRow(silent.stdout, "runner"),
        /, gone: the fleet has not heard from it for \d+(\.\d)?s$/,
      );
      assert.match(promptSection(silent.stdout), /\n {2}02 {2}runner gone /);
      assert.equal(
        silent.stderr,
        `hint: resume it on its machine, ${gone.lease.host}: prompt_runner run ${packet.dir} --resume\n`,
      );

      // Resumed on its machine, and finished.
      await packet.writePrompt("02_repaired.prompt.md", FIXED);
      runner = startRun(packet.dir, [...fleetFlags, "--resume"]);
      const done = await runner.finish();
      assert.equal(done.code, 0, done.stderr);
      const finished = await fleetStatusWhen(
        "the fleet's rollup of the finished run",
        address,
        fleet,
        packet,
        (r) =>
          r.run.status === "completed" && r.attempt.number === 3 &&
          r.progress.completed === 2,
      );
      const filesFinished = await filesStatus(packet);
      assertSame(finished, filesFinished);
      assert.deepEqual(
        [finished.lease.state, finished.progress.completed],
        ["none", 2],
      );
      assert.deepEqual(
        [finished.attempt.number, finished.attempt.mode],
        [3, "run"],
      );
      assert.equal(finished.verifier.passed, true);
      assert.equal(finished.provider.cost_usd, 0.75);
      const over = await runCli(
        ["status", address, "--fleet", fleet],
        blind(packet),
      );
      assert.equal(over.code, 0, over.stderr);
      assert.equal(over.stderr, "", "no hint for a finished run");
      assert.match(over.stdout, /^test-packet {2}completed\n/);
      assert.equal(
        reportRow(over.stdout, "runner"),
        "  runner      none: the run is over",
      );
      const overOnFiles = await runCli(["status", packet.dir]);
      assert.equal(
        promptSection(over.stdout),
        promptSection(overOnFiles.stdout),
      );
    } finally {
      await runner[Symbol.asyncDispose]();
    }
  },
});

Deno.test({
  name:
    "status with a fleet TARGET that matches no run exits 3, one that matches several exits 2 naming them, and without a fleet, or with an unreachable one, names why; a run's hostile names and reasons are shown safely",
  ignore,
  async fn(): Promise<void> {
    await using servers = await NatsServers.start(1);
    const fleet = servers.url();
    await using one = await makePacket({
      prompts: { "01_quick.prompt.md": QUICK },
    });
    await using two = await makePacket({
      prompts: { "01_quick.prompt.md": QUICK },
    });
    await using evil = await makePacket({
      prompts: { "01_evil.prompt.md": EVIL },
    });
    // Two machines' runs under one id, for the ambiguous TARGET (the fleet
    // dedupes events by run id and seq, so it keeps the first's only: only
    // their snapshots are read here), and a run that fails.
    const started = [[one, "m1", "twin"], [two, "m2", "twin"], [
      evil,
      "m2",
      "evil",
    ]] as const;
    for (const [packet, node, runId] of started) {
      await using run = startRun(packet.dir, [
        "--fleet",
        fleet,
        "--fleet-node",
        node,
        "--run-id",
        runId,
      ]);
      const done = await run.finish();
      assert.equal(done.code, packet === evil ? 1 : 0, done.stderr);
    }
    const client = {
      denoFlags: [`--deny-read=${one.root},${two.root},${evil.root}`],
    };
    const runs = await waitFor("the three runs in the fleet", async () => {
      const ls = await runCli(["fleet", "ls", "--json", "--fleet", fleet]);
      const lines = ls.stdout.trim().split("\n").filter(Boolean);
      return lines.length === 3 ? lines.map((line) => JSON.parse(line)) : null;
    });
    const m2 = runs.find((run) => run.node === "m2" && run.run_id === "twin");
    const address = `fleet:m2/${m2.root}/twin`;

    const none = await runCli(
      ["status", "fleet:nope", "--fleet", fleet, "--json"],
      client,
    );
    assert.equal(none.code, 3, none.stderr);
    assert.equal(none.stdout, "");
    assert.match(
      none.stderr,
      /^error: No run in the fleet at .* matches fleet:nope\n/,
    );

    const several = await runCli(
      ["status", "fleet:twin", "--fleet", fleet],
      client,
    );
    assert.equal(several.code, 2, several.stderr);
    assert.equal(several.stdout, "");
    assert.match(
      several.stderr,
      /^error: fleet:twin matches 2 runs of the fleet: fleet:m1\/r-[0-9a-f]{12}\/twin, fleet:m2\/r-[0-9a-f]{12}\/twin\n/,
    );
    const named = await runCli(
      ["status", address, "--fleet", fleet, "--json"],
      client,
    );
    assert.equal(named.code, 0, named.stderr);
    const rollup = JSON.parse(named.stdout);
    assert.deepEqual(
      [rollup.target, rollup.run.status, rollup.lease.state],
      [address, "completed", "none"],
    );

    // --json keeps what the run said; the report shows it safely.
    const hostile = await runCli(
      ["status", "fleet:evil", "--fleet", fleet, "--json"],
      client,
    );
    assert.equal(hostile.code, 0, hostile.stderr);
    const failed = JSON.parse(hostile.stdout);
    assert.deepEqual(
      [failed.run.status, failed.progress.current.name],
      ["failed", "Evil\x07\x1b]0;pwn\x07\x1b[31mName"],
    );
    assert.ok(
      failed.attempt.detail.startsWith(
        "failed: provider_auth_claim: denied\x07",
      ),
      failed.attempt.detail,
    );
    const shown = await runCli(
      ["status", "fleet:evil", "--fleet", fleet],
      client,
    );
    assert.equal(shown.code, 0, shown.stderr);
    assert.doesNotMatch(shown.stdout, CONTROL);
    assert.match(shown.stdout, /provider_auth_claim: deniedx /);
    assert.match(shown.stdout, /\n {2}01 {2}failed +EvilName +1 attempt: run/);

    const noFleet = await runCli(["status", "fleet:twin"], {
      ...client,
      unsetEnv: ["PROMPT_RUNNER_FLEET"],
    });
    assert.equal(noFleet.code, 2, noFleet.stderr);
    assert.match(
      noFleet.stderr,
      /^error: The fleet TARGET "fleet:twin" needs a fleet: give --fleet URL\n/,
    );

    const withRoot = await runCli(
      ["status", address, "--fleet", fleet, "--state-root", one.root],
      client,
    );
    assert.equal(withRoot.code, 2, withRoot.stderr);
    assert.match(
      withRoot.stderr,
      /^error: A fleet TARGET names its run: --state-root does not go with fleet:m2\//,
    );

    const closed = servers.nodes[0]!.port;
    await servers.kill(0);
    const unreachable = await runCli(
      [
        "status",
        "fleet:twin",
        "--fleet",
        `nats://ops:s3cret@127.0.0.1:${closed}`,
      ],
      client,
    );
    assert.equal(unreachable.code, 4, unreachable.stderr);
    assert.match(
      unreachable.stderr,
      new RegExp(
        `^error: Cannot reach the fleet at nats://ops:\\*\\*\\*@127\\.0\\.0\\.1:${closed}: `,
      ),
    );
    assert.doesNotMatch(unreachable.stderr, /s3cret/);
  },
});
