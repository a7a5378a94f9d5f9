#!/usr/bin/env -S deno run --allow-read --allow-write=dist --allow-run --allow-env
/**
 * `deno task compile`: builds `dist/prompt_runner`, a single binary with the
 * CLI's permissions and `--unstable-worker-options` (the control commands'
 * confined worker, DESIGN §11) baked in. `deno compile` downloads a Deno runtime
 * (`denort`) for the target; where that download is impossible this script
 * says so plainly instead of leaving a Rust backtrace.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join } from "node:path";
import { CLI_PERMISSIONS as PERMISSIONS } from "./permissions.ts";

const ROOT = join(import.meta.dirname!, "..");

async function compile(): Promise<number> {
  // `deno task compile --output PATH` builds elsewhere (the tests do).
  const at = Deno.args.indexOf("--output");
  const output = at >= 0 && at + 1 < Deno.args.length
    ? Deno.args[at + 1]!
    : join(ROOT, "dist", "prompt_runner");
  const extra = at >= 0 ? Deno.args.toSpliced(at, 2) : Deno.args;
  const child = await new Deno.Command(Deno.execPath(), {
    args: [
      "compile",
      ...PERMISSIONS,
      "--output",
      output,
      // The CLI imports its command modules by computed specifiers (so a
      // command does not load the others), and starts the control worker
      // by URL: the compiler sees neither. The fleet code (and the NATS
      // client behind it) is loaded the same way, and its bridge worker
      // started by URL.
      "--include",
      join(ROOT, "commands"),
      "--include",
      join(ROOT, "lib", "fleet"),
      ...extra,
      join(ROOT, "main.ts"),
    ],
    stdout: "inherit",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(child.stderr);
  if (child.success) {
    console.error(`Built ${output}`);
    return 0;
  }
  const denortBin = Deno.env.get("DENORT_BIN");
  if (denortBin !== undefined && /Could not find denort/i.test(stderr)) {
    console.error(
      `error: DENORT_BIN names ${
        JSON.stringify(denortBin)
      }, which is not a denort binary that can be read`,
    );
    console.error(
      "hint: point DENORT_BIN at a denort binary of the same Deno version, or unset it to download one",
    );
    return 1;
  }
  if (/denort|dl\.deno\.land|error sending request/i.test(stderr)) {
    console.error(
      "error: deno compile could not download the Deno runtime (denort) it embeds in the binary",
    );
    console.error(
      "hint: run this where https://dl.deno.land is reachable, or set DENORT_BIN to a denort binary of the same Deno version",
    );
    return 1;
  }
  console.error(stderr.trimEnd());
  return child.code || 1;
}

if (import.meta.main) {
  Deno.exitCode = await compile();
}
