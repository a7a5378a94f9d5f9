#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * Fuzzing the control directory: while simulated runs stream, drops every
 * kind of bad request file into `control/requests/` (random bytes, empty,
 * huge, deeply nested, wrong types, other runs' requests, names near the
 * 255-byte limit or colliding after sanitising or without `.json`, links
 * into a canary directory, directories with links inside, FIFOs; written
 * through a dot-temp file and a rename, or directly), and plants links at
 * the runner's own paths (`control/log.jsonl`, `control/outcomes`,
 * `control/snapshot.json`, `interventions/<p>.jsonl`, `logs/<run>/…`)
 * pointing into the canary directory. Then checks that every run ended
 * `completed` with exit 0, that the canary directory is byte for byte
 * unchanged (nothing written outside the state root), that every request
 * file got a receipt and a final log entry with a reason and was removed,
 * and that every planted link was moved aside and logged, never followed.
 * Then fuzzes the dashboard as `scripts/fuzz_dashboard/main.ts` says. Prints a
 * summary of each; exits 1 on any violation.
 *
 * The packet and its runs are in `runs.ts`, the fuzz's shared state in
 * `state.ts`, the request dropper and the link planter in `actors/`, the
 * checks in `audits/` (with the state root's reading and the temp-file
 * check shared with the soak in `../_audit/`).
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 \
 *     scripts/fuzz/main.ts [--quick] [--seconds N] [--seed N] [--keep]
 *
 * Two minutes each by default; `--quick` is about 15 and 35 seconds.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { defaultStateRoot } from "../../lib/workspace/mod.ts";
import {
  checkTemps,
  isEvent,
  listNames,
  readSnapshotFile,
} from "../_audit/mod.ts";
import {
  formatCount,
  leaveScratch,
  leftoverProcesses,
  onInterrupt,
  parseScriptFlags,
  reportViolations,
  Rng,
  Violations,
} from "../_harness/mod.ts";
import { fuzzDashboard } from "../fuzz_dashboard/main.ts";
import { dropper } from "./actors/dropper.ts";
import { planter } from "./actors/planter.ts";
import { NAME_MAX } from "./actors/requests.ts";
import { compareTrees, makeCanary, snapshotTree } from "./audits/canary.ts";
import { checkLinks, checkUnrepresentable } from "./audits/links.ts";
import { checkDropped, collectRecords } from "./audits/requests.ts";
import { runOnce, type RunOutcome, writeFuzzPacket } from "./runs.ts";
import type { Fuzz } from "./state.ts";

async function main(): Promise<number> {
  const flags = parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 15 });
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fuzz_" });
  const live = new Set<Deno.ChildProcess>();
  const killAll = async (): Promise<void> => {
    for (const child of live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone.
      }
    }
    await Promise.allSettled([...live].map((c) => c.status));
  };
  const offInterrupt = onInterrupt(dir, flags.keep, killAll);
  const began = Date.now();
  try {
    const packet = await writeFuzzPacket(dir);
    const canary = join(dir, "canary");
    const saved = join(dir, "saved");
    await makeCanary(canary);
    await Deno.mkdir(saved);
    const stateRoot = defaultStateRoot(packet);
    const fuzz: Fuzz = {
      dir,
      packet,
      stateRoot,
      requests: join(stateRoot, "control", "requests"),
      canary,
      saved,
      rng: new Rng(flags.seed),
      violations: new Violations(),
      dropped: [],
      unmakeable: [],
      unrepresentable: [],
      byKind: new Map(),
      plants: [],
      hardPlants: [],
      runId: null,
      previousRunId: null,
      stop: false,
      seq: 0,
      savedSeq: 0,
      live,
    };
    const before = await snapshotTree(canary);
    const topBefore = await listNames(dir);
    console.error(`fuzz: ${flags.seconds} s, seed ${flags.seed}, in ${dir}`);
    const deadline = began + flags.seconds * 1000;
    const workers = [dropper(fuzz), dropper(fuzz), planter(fuzz)];
    const runs: RunOutcome[] = [];
    while (Date.now() < deadline) {
      const outcome = runOnce(fuzz);
      const stopAt = setTimeout(
        () => fuzz.stop = true,
        Math.max(0, deadline - Date.now()),
      );
      const done = await outcome;
      clearTimeout(stopAt);
      runs.push(done);
      fuzz.runId = null;
      if (done.code !== 0) break;
    }
    fuzz.stop = true;
    await Promise.all(workers);
    const v = fuzz.violations;
    for (const run of runs) {
      const status = (run.last?.data as Record<string, unknown> | undefined)
        ?.status;
      if (
        run.code !== 0 || !isEvent(run.last, "run_finished") ||
        status !== "completed"
      ) {
        v.add(
          "runner completes",
          `run ${run.runId} exited ${run.code}${
            run.signal ? ` (${run.signal})` : ""
          }, last event ${run.last?.type} ${status ?? ""}: ${
            run.stderr.trim().slice(0, 400)
          }`,
        );
      }
      for (const line of run.stderr.split("\n")) {
        if (line.trim() === "") continue;
        if (
          /^warning: control plane: .* was a (symbolic|hard) link/.test(line)
        ) {
          continue;
        }
        if (/^warning: .* was a link; it was moved aside/.test(line)) continue;
        // A link put at a file in the instant before the runner's rename over
        // it: replaced unfollowed, reported, and counted by checkLinks().
        if (
          /^warning: control plane: .* was moved away by someone else as the runner rewrote it/
            .test(line)
        ) continue;
        v.add("runner output", `run ${run.runId}: ${line.slice(0, 300)}`);
      }
    }
    for (const problem of compareTrees(before, await snapshotTree(canary))) {
      v.add("canary unchanged", problem);
    }
    const topAfter = await listNames(dir);
    if (JSON.stringify(topBefore) !== JSON.stringify(topAfter)) {
      v.add(
        "nothing written outside the state root",
        `the temporary directory now holds ${topAfter.join(", ")}`,
      );
    }
    const records = await collectRecords(stateRoot, saved);
    // From the last run's final status on, its last sweep may have passed:
    // a file put in place then is its writer's to settle (DESIGN §5).
    const last = await readSnapshotFile(stateRoot).catch(() => null);
    const finalAt = last !== null && last.status !== "running"
      ? Date.parse(String(last.updated_at))
      : NaN;
    const lateAfter = Number.isFinite(finalAt) ? finalAt : Infinity;
    const requests = await checkDropped(
      fuzz.requests,
      fuzz.dropped,
      records,
      v,
      lateAfter,
    );
    const links = await checkLinks(
      stateRoot,
      [
        ...fuzz.plants,
        ...fuzz.hardPlants.map((plant) => ({ ...plant, hard: true })),
      ],
      records.log,
      v,
    );
    // A name that is not UTF-8 cannot be read or removed through Deno: its
    // rejection names the problem and it stays.
    const unexplained = checkUnrepresentable(
      fuzz.unrepresentable,
      records.log,
      v,
      lateAfter,
    );
    await checkTemps(stateRoot, v);
    for (const p of await leftoverProcesses(dir)) v.add("no process left", p);
    const elapsed = Math.round((Date.now() - began) / 1000);
    const kinds = [...fuzz.byKind].sort((a, b) => b[1] - a[1]).map(([k, n]) =>
      `${k} ${n}`
    ).join(", ");
    const hardPaths = new Map<string, number>();
    for (const { path } of fuzz.hardPlants) {
      hardPaths.set(path, (hardPaths.get(path) ?? 0) + 1);
    }
    const plantPaths = new Map<string, number>();
    for (const { path } of fuzz.plants) {
      const key = path.replace(/^logs\/[^/]+/, "logs/<run>");
      plantPaths.set(key, (plantPaths.get(key) ?? 0) + 1);
    }
    console.log(
      `fuzz: ${elapsed} s, ${runs.length} runs, ${
        formatCount(fuzz.dropped.length)
      } request files dropped, ${
        fuzz.plants.length + fuzz.hardPlants.length
      } links planted, violations: ${formatCount(v.count)}`,
    );
    console.log(`  files by kind: ${kinds}`);
    console.log(
      `  outcomes: ${
        Object.entries(requests.outcomes).map(([k, n]) => `${k} ${n}`).join(
          ", ",
        )
      }; ${requests.checked} files checked; ${requests.redecided} decided again after the fuzzer moved their receipt away; ${requests.late} put in place after the last run's final status and left for their writer`,
    );
    console.log(
      `  links planted: ${
        [...plantPaths].map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      }; moved aside and logged ${links.movedAside}, replaced by an atomic rename ${links.replaced}, never reached ${links.untouched}; hard links: ${
        [...hardPaths].map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      }`,
    );
    console.log(
      `  names not representable: ${fuzz.unrepresentable.length} not UTF-8 (left in requests/, ${
        fuzz.unrepresentable.length - unexplained.missing - unexplained.late
      } with a logged rejection naming them as Deno reads them, ${unexplained.late} put in place after the last run's final status), ${fuzz.unmakeable.length} longer than ${NAME_MAX} bytes (refused by the file system); seed ${flags.seed}`,
    );
    return reportViolations(v);
  } finally {
    await killAll();
    offInterrupt();
    await leaveScratch("fuzz", dir, flags.keep);
  }
}

if (import.meta.main) {
  const control = await main();
  const dashboard = await fuzzDashboard(
    parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 15 }),
  );
  Deno.exit(Math.max(control, dashboard));
}
