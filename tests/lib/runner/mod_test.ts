/**
 * The runner takes its control plane as an injected opener: the runner
 * itself builds none, and the public `runPacket` passes the file plane.
 */

import assert from "node:assert/strict";
import { controlPaths } from "../../../lib/control/paths.ts";
import { snapshot } from "../../../lib/control/current_run.ts";
import { runPacket } from "../../../lib/runner/mod.ts";
import { runPacket as runWithPlane } from "../../../lib/runner/run_packet.ts";
import type { OpenPlane } from "../../../lib/runner/run_options.ts";
import type { RunOpenInfo, RunStatus } from "../../../lib/shared/mod.ts";
import { pathExists } from "../../../lib/shared/mod.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

const PROMPT = promptFile(
  "simulate: {attempts: [{writes: [{path: NOTES.md, text: done}]}]}",
);

Deno.test("the runner opens no control plane when none is injected", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": PROMPT },
  });
  const result = await runWithPlane(packet.dir);
  assert.equal(result.status, "completed");
  assert.ok(await pathExists(`${packet.stateRoot}/state.json`));
  assert.equal(await pathExists(controlPaths(packet.stateRoot).dir), false);
});

Deno.test("the runner reports to the plane its caller injects", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": PROMPT },
  });
  const opened: { root: string; info: RunOpenInfo }[] = [];
  const seen: string[] = [];
  const closed: RunStatus[] = [];
  const plane: OpenPlane = (stateRoot, info) => {
    opened.push({ root: stateRoot, info });
    return Promise.resolve({
      opened: { last_seq: 0, view: {}, delivered_steers: {} },
      observe(event): Promise<void> {
        seen.push(event.type);
        return Promise.resolve();
      },
      close(status): Promise<void> {
        closed.push(status);
        return Promise.resolve();
      },
    });
  };
  const result = await runWithPlane(packet.dir, { plane });
  assert.equal(result.status, "completed");
  assert.equal(opened.length, 1);
  assert.equal(opened[0]!.root, result.state_root);
  assert.equal(opened[0]!.info.run_id, result.run_id);
  assert.deepEqual(opened[0]!.info.prompt_ids, ["01"]);
  assert.equal(seen.at(-1), "run_finished");
  assert.ok(seen.includes("prompt_completed"), seen.join(", "));
  assert.deepEqual(closed, ["completed"]);
  // The injected plane is the only one: no file plane beside it.
  assert.equal(await pathExists(controlPaths(packet.stateRoot).dir), false);
});

Deno.test("the public runPacket reports to the file control plane when given nothing", async () => {
  await using packet = await makePacket({
    prompts: { "01_notes.prompt.md": PROMPT },
  });
  const result = await runPacket(packet.dir);
  assert.equal(result.status, "completed");
  const shown = await snapshot({
    state_root: packet.stateRoot,
    run_id: result.run_id,
  });
  assert.equal(shown.status, "completed");
  assert.equal(shown.run_id, result.run_id);
});
