/**
 * The fuzzers, short: `scripts/fuzz/main.ts --quick` (about fifteen seconds of
 * bad request files and planted links, then about thirty-five of a live
 * dashboard under random, oversized and half-sent requests and connection
 * floods) finds no violation.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI_PERMISSIONS, ROOT } from "../_helpers/run_cli.ts";

Deno.test("scripts/fuzz/main.ts --quick exits 0 and reports violations: 0, for the control directory and the dashboard", async () => {
  // Niced, so the rest of the suite running beside it keeps its pace.
  const output = await new Deno.Command("nice", {
    args: [
      "-n",
      "10",
      Deno.execPath(),
      "run",
      "--quiet",
      ...CLI_PERMISSIONS,
      join(ROOT, "scripts", "fuzz", "main.ts"),
      "--quick",
    ],
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout);
  const stderr = new TextDecoder().decode(output.stderr);
  assert.match(
    stdout,
    /^fuzz: \d+ s, \d+ runs, [\d,]+ request files dropped, \d+ links planted, violations: \d+$/m,
    stdout + stderr,
  );
  assert.match(
    stdout,
    /^fuzz dashboard: \d+ s, \d+ runs, [\d,]+ requests, [\d,]+ half-sent, \d+ floods \([\d,]+ connections\), peak RSS \d+ MiB, events\/s [\d.]+% of without, violations: \d+$/m,
    stdout + stderr,
  );
  assert.match(stdout, /^fuzz dashboard: .*, violations: 0$/m, stdout + stderr);
  assert.match(stdout, /^fuzz: .*, violations: 0$/m, stdout + stderr);
  assert.equal(output.code, 0, stdout + stderr);
});
