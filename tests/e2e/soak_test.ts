/**
 * The endurance soak, short: `scripts/soak/main.ts --quick` (about a minute of
 * kills, resumes, writers, followers and pollers) finds no violation.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI_PERMISSIONS, ROOT } from "../_helpers/run_cli.ts";

Deno.test("scripts/soak/main.ts --quick exits 0 and reports violations: 0", async () => {
  // Niced, so the rest of the suite running beside it keeps its pace.
  const output = await new Deno.Command("nice", {
    args: [
      "-n",
      "10",
      Deno.execPath(),
      "run",
      "--quiet",
      ...CLI_PERMISSIONS,
      join(ROOT, "scripts", "soak", "main.ts"),
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
    /^soak: \d+ s, \d+ kills, [\d,]+ requests \([\d,]+ acked\), [\d,]+ seqs checked by 4 followers, [\d,]+ status reads, [\d,]+ amendments, violations: \d+$/m,
    stdout + stderr,
  );
  assert.match(stdout, /violations: 0$/m, stdout + stderr);
  assert.equal(output.code, 0, stdout + stderr);
});
