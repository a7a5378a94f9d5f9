/**
 * `deno task compile` (scripts/compile.ts): where the Deno runtime it embeds
 * cannot be had, it says so in two plain lines naming `DENORT_BIN`; where it
 * can (a machine with the runtime cached), the binary it builds runs the
 * CLI, confined control commands included.
 */

import assert from "node:assert/strict";
import { join } from "node:path";

const SCRIPT = join(import.meta.dirname!, "..", "..", "scripts", "compile.ts");

async function compile(
  dir: string,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string; output: string }> {
  const output = join(dir, "prompt_runner");
  // Set, even to "", DENORT_BIN names a file: only the test decides it.
  const inherited = Deno.env.toObject();
  delete inherited.DENORT_BIN;
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${dir}`,
      "--allow-run",
      "--allow-env",
      SCRIPT,
      "--output",
      output,
    ],
    clearEnv: true,
    env: { ...inherited, NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: result.code,
    stderr: new TextDecoder().decode(result.stderr),
    output,
  };
}

async function run(
  binary: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const result = await new Deno.Command(binary, {
    args,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return {
    code: result.code,
    stdout: decode(result.stdout),
    stderr: decode(result.stderr),
  };
}

Deno.test("deno task compile without a reachable runtime fails in two lines naming DENORT_BIN; with one, the binary runs the CLI", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pr_compile_" });
  try {
    // A proxy that refuses every connection: no download can succeed.
    const result = await compile(dir, {
      HTTPS_PROXY: "http://127.0.0.1:9",
      https_proxy: "http://127.0.0.1:9",
    });
    if (result.code === 0) {
      // This machine has the runtime cached: the binary must work.
      const help = await run(result.output, ["--help"]);
      assert.equal(help.code, 0, help.stderr);
      assert.match(help.stdout, /^Usage: prompt_runner /m);
      const root = join(dir, "root");
      await Deno.mkdir(join(root, "control"), { recursive: true, mode: 0o700 });
      const status = await run(result.output, ["control", "status", root]);
      assert.doesNotMatch(status.stderr, /Cannot confine|internal error/);
      assert.notEqual(status.code, 70, status.stderr);
      return;
    }
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      "error: deno compile could not download the Deno runtime (denort) it embeds in the binary\n" +
        "hint: run this where https://dl.deno.land is reachable, or set DENORT_BIN to a denort binary of the same Deno version\n",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("deno task compile with DENORT_BIN naming no file says DENORT_BIN is wrong", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pr_compile_" });
  try {
    const missing = join(dir, "no-denort");
    const result = await compile(dir, { DENORT_BIN: missing });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr,
      `error: DENORT_BIN names ${
        JSON.stringify(missing)
      }, which is not a denort binary that can be read\n` +
        "hint: point DENORT_BIN at a denort binary of the same Deno version, or unset it to download one\n",
    );
    await assert.rejects(
      Deno.stat(join(dir, "prompt_runner")),
      Deno.errors.NotFound,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
