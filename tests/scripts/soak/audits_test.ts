/**
 * The soak's checks can fail: a small real run (a view, a steer, an
 * amendment) passes every check, and each check fires on a copy of its
 * state root with one planted violation.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { checkTemps, readEventFiles } from "../../../scripts/_audit/mod.ts";
import {
  checkFollowerCoverage,
  checkStatusRead,
  FollowTracker,
} from "../../../scripts/soak/audits/reads.ts";
import {
  checkRequests,
  checkSteers,
} from "../../../scripts/soak/audits/requests.ts";
import {
  type AckedAmendment,
  checkAmendments,
  checkAttempts,
  checkEventFiles,
} from "../../../scripts/soak/audits/runs.ts";
import {
  MAX_STEERS,
  poolName,
  writeSoakPacket,
} from "../../../scripts/soak/packet.ts";
import {
  leftoverProcesses,
  runCli,
  spawnCli,
  Violations,
} from "../../../scripts/_harness/mod.ts";
import { waitForSnapshot } from "../../_helpers/live_run.ts";

interface Fixture {
  packet: string;
  stateRoot: string;
  acked: Map<string, string>;
  amendments: AckedAmendment[];
}

/** A finished run of the soak packet with one amendment, one view change and one steer. */
async function makeFixture(dir: string): Promise<Fixture> {
  const packet = await writeSoakPacket(dir, { rounds: 6 });
  const stateRoot = join(packet, ".prompt_runner");
  const amended = await runCli([
    "control",
    "amend",
    packet,
    "01",
    "--add-file",
    poolName(7),
    "--reason",
    "fixture",
    "--json",
  ]);
  assert.equal(amended.code, 0, amended.stderr);
  const amendments = [{
    record: JSON.parse(amended.stdout),
    acked_at: Date.now(),
  }];
  const runner = spawnCli(["run", packet, "--json"], { stdout: "null" });
  const acked = new Map<string, string>();
  try {
    await waitForSnapshot(
      stateRoot,
      "a prompt running",
      (s) => s.prompt_id === "01" && Number(s.last_seq) > 2,
    );
    for (
      const [command, args] of [
        ["set_view", ["view", packet, "--thinking", "hide"]],
        ["steer", ["steer", packet, "mind", "the", "gap"]],
      ] as const
    ) {
      const sent = await runCli(["control", ...args]);
      assert.equal(sent.code, 0, sent.stderr);
      acked.set(/\(request (\S+)\)/.exec(sent.stdout)![1]!, command);
    }
  } finally {
    const [status, stderr] = await Promise.all([
      runner.status,
      new Response(runner.stderr).text(),
    ]);
    assert.equal(status.code, 0, stderr);
  }
  return { packet, stateRoot, acked, amendments };
}

async function copyTree(from: string, to: string): Promise<void> {
  const result = await new Deno.Command("cp", { args: ["-a", from, to] })
    .output();
  assert.ok(result.success, new TextDecoder().decode(result.stderr));
}

async function editJsonl(
  path: string,
  edit: (lines: string[]) => string[],
): Promise<void> {
  const lines = (await Deno.readTextFile(path)).split("\n").filter(Boolean);
  await Deno.writeTextFile(path, edit(lines).join("\n") + "\n");
}

/** Runs every state root check of the soak on a state root. */
async function audit(fixture: Fixture, stateRoot: string): Promise<Violations> {
  const v = new Violations(100);
  const files = await readEventFiles(stateRoot, v);
  const runs = checkEventFiles(files, v);
  await checkRequests(stateRoot, fixture.acked, v);
  await checkSteers(stateRoot, MAX_STEERS, files, v);
  await checkAttempts(stateRoot, runs, v);
  await checkTemps(stateRoot, v);
  return v;
}

Deno.test("the soak's checks pass a clean run and fire on each planted violation", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_test_" });
  try {
    const fixture = await makeFixture(dir);
    let copies = 0;
    /** A copy of the fixture's state root with `plant` applied. */
    const planted = async (
      plant: (root: string) => Promise<void>,
    ): Promise<string> => {
      const root = join(dir, `copy-${++copies}`);
      await copyTree(fixture.stateRoot, root);
      await plant(root);
      return root;
    };
    const log = (root: string): string => join(root, "control", "log.jsonl");

    await t.step("a clean run passes every check", async () => {
      const v = await audit(fixture, fixture.stateRoot);
      assert.deepEqual(v.report(), []);
      const files = await readEventFiles(fixture.stateRoot, v);
      await checkAmendments(
        fixture.packet,
        fixture.stateRoot,
        fixture.amendments,
        files,
        v,
      );
      assert.deepEqual(v.report(), []);
      const steered = await Deno.readTextFile(
        join(fixture.stateRoot, "interventions", "01.jsonl"),
      );
      assert.equal(steered.trim().split("\n").length, 1, "the steer landed");
    });

    await t.step("a missing receipt fires 'one receipt'", async () => {
      const [id] = [...fixture.acked.keys()];
      const root = await planted(async (r) => {
        await Deno.remove(join(r, "control", "outcomes", `${id}.json`));
      });
      const v = await audit(fixture, root);
      assert.equal(v.countOf("one receipt"), 1, v.report().join("\n"));
    });

    await t.step(
      "a duplicated final log line fires 'one final log entry'",
      async () => {
        const root = await planted((r) =>
          editJsonl(log(r), (lines) => {
            const final = lines.find((l) => {
              const entry = JSON.parse(l);
              return entry.outcome === "applied" && entry.request_id !== null;
            })!;
            return [...lines, final];
          })
        );
        const v = await audit(fixture, root);
        assert.equal(
          v.countOf("one final log entry"),
          1,
          v.report().join("\n"),
        );
      },
    );

    await t.step(
      "a steer without its accepted entry fires 'steer accepted once'",
      async () => {
        const root = await planted((r) =>
          editJsonl(
            log(r),
            (lines) =>
              lines.filter((l) => JSON.parse(l).outcome !== "accepted"),
          )
        );
        const v = await audit(fixture, root);
        assert.equal(
          v.countOf("steer accepted once"),
          1,
          v.report().join("\n"),
        );
      },
    );

    await t.step(
      "a request left in requests/ fires 'requests consumed'",
      async () => {
        const root = await planted((r) =>
          Deno.writeTextFile(join(r, "control", "requests", "x.json"), "{}")
        );
        const v = await audit(fixture, root);
        assert.equal(v.countOf("requests consumed"), 1, v.report().join("\n"));
      },
    );

    await t.step("a dropped seq fires 'events continuous'", async () => {
      const root = await planted((r) =>
        editJsonl(
          join(r, "control", "events.jsonl"),
          (lines) => lines.filter((_, i) => i !== 5),
        )
      );
      const v = await audit(fixture, root);
      assert.equal(v.countOf("events continuous"), 1, v.report().join("\n"));
    });

    await t.step(
      "a steer recorded twice fires 'steer applied once'",
      async () => {
        const root = await planted((r) =>
          editJsonl(
            join(r, "interventions", "01.jsonl"),
            (lines) => [...lines, ...lines],
          )
        );
        const v = await audit(fixture, root);
        assert.ok(v.countOf("steer applied once") >= 1, v.report().join("\n"));
      },
    );

    await t.step(
      "more steers delivered than the budget fires 'steer budget'",
      async () => {
        const root = await planted((r) =>
          editJsonl(join(r, "interventions", "01.jsonl"), (lines) => {
            const record = JSON.parse(lines[0]!);
            return [
              ...lines,
              ...Array.from(
                { length: MAX_STEERS },
                (_, i) =>
                  JSON.stringify({ ...record, request_id: `extra-${i}` }),
              ),
            ];
          })
        );
        const v = await audit(fixture, root);
        assert.equal(v.countOf("steer budget"), 1, v.report().join("\n"));
      },
    );

    await t.step(
      "a receipt that disagrees with the log fires 'receipt agrees with log'",
      async () => {
        const [id] = [...fixture.acked].find(([, c]) => c === "set_view")!;
        const root = await planted(async (r) => {
          const path = join(r, "control", "outcomes", `${id}.json`);
          const receipt = JSON.parse(await Deno.readTextFile(path));
          await Deno.writeTextFile(
            path,
            JSON.stringify({ ...receipt, outcome: "rejected" }),
          );
        });
        const v = await audit(fixture, root);
        assert.equal(
          v.countOf("receipt agrees with log"),
          1,
          v.report().join("\n"),
        );
      },
    );

    await t.step(
      "a gap in attempt numbers fires 'attempts numbered'; one left running fires 'attempts settled'",
      async () => {
        for (
          const [check, edit] of [
            [
              "attempts numbered",
              (a: Record<string, unknown>) => a.attempt = 2,
            ],
            [
              "attempts settled",
              (a: Record<string, unknown>) => a.status = "running",
            ],
          ] as const
        ) {
          const root = await planted(async (r) => {
            const path = join(r, "state.json");
            const state = JSON.parse(await Deno.readTextFile(path));
            edit(state.prompts["02"].attempts[0]);
            await Deno.writeTextFile(path, JSON.stringify(state));
          });
          const v = await audit(fixture, root);
          assert.ok(
            v.countOf(check) >= 1,
            `${check}: ${v.report().join("\n")}`,
          );
        }
      },
    );

    await t.step(
      "a leftover dot-temp or claimed file fires 'no temp files'",
      async () => {
        const root = await planted(async (r) => {
          await Deno.writeTextFile(
            join(r, "control", ".snapshot.json.0badc0de.tmp"),
            "",
          );
          await Deno.writeTextFile(
            join(r, "control", "requests", ".x.json.claimed"),
            "",
          );
        });
        const v = await audit(fixture, root);
        assert.equal(v.countOf("no temp files"), 2, v.report().join("\n"));
      },
    );

    await t.step(
      "an acknowledged amendment that was lost fires 'amendments enforced' and 'amendments recorded once'",
      async () => {
        const v = new Violations(100);
        const files = await readEventFiles(fixture.stateRoot, v);
        const lost: AckedAmendment = {
          record: {
            ...fixture.amendments[0]!.record,
            at: "2026-01-01T00:00:00.000Z",
            entries: [poolName(9)],
          },
          acked_at: 0,
        };
        await checkAmendments(
          fixture.packet,
          fixture.stateRoot,
          [lost],
          files,
          v,
        );
        assert.ok(v.countOf("amendments enforced") >= 2, v.report().join("\n"));
        assert.equal(v.countOf("amendments recorded once"), 1);
      },
    );

    await t.step(
      "a follower that missed or repeated a seq fires, and so does its coverage",
      () => {
        const v = new Violations(100);
        const tracker = new FollowTracker();
        tracker.follow("r1");
        const line = (seq: number, type = "message_streamed"): string =>
          JSON.stringify({ seq, run_id: "r1", type });
        assert.equal(tracker.see(line(1)), null);
        assert.match(tracker.see(line(3))!, /seq 3 after 1 \(skipped 2\.\.2\)/);
        assert.match(tracker.see(line(3))!, /seq 3 again/);
        assert.match(tracker.see("{torn")!, /not JSON/);
        assert.equal(tracker.see(line(4, "run_finished")), null);
        assert.ok(tracker.finished.has("r1"));
        checkFollowerCoverage(
          [tracker],
          new Map([["r1", { last: 4, finished: "completed" }]]),
          v,
        );
        assert.equal(v.countOf("followers saw every seq"), 0, "4 lines seen");
        const late = new FollowTracker();
        late.follow("r1");
        late.see(line(1));
        checkFollowerCoverage(
          [late],
          new Map([["r1", { last: 4, finished: "completed" }]]),
          v,
        );
        assert.equal(v.countOf("followers saw every seq"), 1);
      },
    );

    await t.step(
      "a status read that is not one whole snapshot object fails",
      async () => {
        const good = await runCli([
          "control",
          "status",
          fixture.packet,
          "--json",
        ]);
        assert.equal(checkStatusRead(good), null);
        const read = (stdout: string, code = 0) => ({
          code,
          signal: null,
          stdout,
          stderr: "",
        });
        assert.match(checkStatusRead(read("", 5))!, /exit 5/);
        assert.match(
          checkStatusRead(read(good.stdout + good.stdout))!,
          /one line/,
        );
        assert.match(checkStatusRead(read('{"v":1'))!, /one line/);
        assert.match(checkStatusRead(read('{"v":1\n'))!, /not JSON/);
        assert.match(checkStatusRead(read("[1]\n"))!, /not a JSON object/);
        const partial = JSON.parse(good.stdout);
        delete partial.last_seq;
        assert.match(
          checkStatusRead(read(JSON.stringify(partial) + "\n"))!,
          /missing fields: last_seq/,
        );
      },
    );

    await t.step(
      "a process left in the temporary directory is found",
      async () => {
        const sleeper = new Deno.Command("sleep", { args: ["30"], cwd: dir })
          .spawn();
        try {
          const found = await leftoverProcesses(dir, 0);
          assert.equal(found.length, 1, found.join("\n"));
          assert.match(found[0]!, /sleep 30/);
        } finally {
          sleeper.kill("SIGKILL");
          await sleeper.status;
        }
        assert.deepEqual(await leftoverProcesses(dir, 0), []);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
