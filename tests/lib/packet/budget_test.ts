import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPacket } from "../../../lib/packet/mod.ts";
import { parseBudget } from "../../../lib/packet/budget.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

Deno.test("loadPacket() reads budget and progress_timeout_ms from the manifest, and a prompt's own", async () => {
  await using packet = await makePacket({
    manifest:
      "budget: {max_cost_usd: 2.5, max_output_tokens: 9000}\nprogress_timeout_ms: 60000",
    prompts: {
      "01_a.prompt.md": promptFile('id: "01"'),
      "02_b.prompt.md": promptFile(
        'id: "02"\nbudget: {max_cost_usd: 0.5}\nprogress_timeout_ms: 5000',
      ),
    },
    git: false,
  });
  const loaded = await loadPacket(packet.dir);
  assert.deepEqual(loaded.budget, {
    max_cost_usd: 2.5,
    max_output_tokens: 9000,
  });
  assert.equal(loaded.prompts[0]!.budget, null);
  assert.equal(loaded.prompts[0]!.progress_timeout_ms, 60000);
  assert.deepEqual(loaded.prompts[1]!.budget, { max_cost_usd: 0.5 });
  assert.equal(loaded.prompts[1]!.progress_timeout_ms, 5000);
});

Deno.test("parseBudget() refuses an unknown key, a negative or non-numeric limit, fractional tokens, and a non-map", () => {
  const cases: [unknown, RegExp][] = [
    [{ max_cost: 1 }, /unknown key "budget\.max_cost"/],
    [
      { max_cost_usd: -1 },
      /budget\.max_cost_usd must be a positive number of US dollars, found -1/,
    ],
    [
      { max_cost_usd: "5$" },
      /budget\.max_cost_usd must be a positive number of US dollars, found "5\$"/,
    ],
    [
      { max_input_tokens: 1.5 },
      /budget\.max_input_tokens must be a positive whole number of tokens, found 1\.5/,
    ],
    [
      { max_output_tokens: 0 },
      /budget\.max_output_tokens must be a positive whole number/,
    ],
    [
      [1, 2],
      /budget must be a map of max_cost_usd, max_input_tokens, max_output_tokens/,
    ],
  ];
  for (const [value, pattern] of cases) {
    assert.throws(
      () => parseBudget(value, "/p/prompt_runner_packet.md"),
      (error: unknown) =>
        error instanceof UsageError && error.exitCode === 2 &&
        pattern.test(`${error.message} ${error.hint ?? ""}`),
      JSON.stringify(value),
    );
  }
  assert.equal(parseBudget(null, "f"), null);
  assert.equal(parseBudget({}, "f"), null);
});

Deno.test("loadPacket() names the prompt file for a bad budget or progress timeout", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_a.prompt.md": promptFile("progress_timeout_ms: soon"),
    },
    git: false,
  });
  const file = join(
    await Deno.realPath(packet.dir),
    "prompts",
    "01_a.prompt.md",
  );
  await assert.rejects(
    () => loadPacket(packet.dir),
    (error: Error) =>
      error.message ===
        `Invalid packet file "${file}": progress_timeout_ms must be a positive number of milliseconds or "unbounded", found "soon"`,
  );
});
