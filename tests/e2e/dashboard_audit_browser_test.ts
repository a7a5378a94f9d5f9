/**
 * The audit chain on the dashboard, in a real headless Chromium against
 * real processes: a run page's control log says the chain holds, and once
 * a line of `control/log.jsonl` is edited by hand, that it does not, naming
 * the line. Skipped, loudly, without Chromium (`.ci/run` installs it).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CHROMIUM } from "../_helpers/browser.ts";
import {
  rootKey,
  runId,
  startDashboard,
  withBrowser,
} from "../_helpers/dashboard.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

Deno.test({
  name:
    "a run page's control log shows that the audit chain holds, and that it does not once a line of the log is edited, naming the line",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: { "01_quick.prompt.md": longPrompt(2, 0) },
    });
    for (const reason of ["first", "second", "third"]) {
      const amend = await runCli([
        "control",
        "amend",
        packet.dir,
        "01",
        "--add-path",
        `${reason}.md`,
        "--reason",
        reason,
      ]);
      assert.equal(amend.code, 0, amend.stderr);
    }
    const run = await runCli(["run", packet.dir]);
    assert.equal(run.code, 0, run.stderr);
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([packet.dir, "--port", "0"]);
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitForSelector("#log .chain[data-chain=holds]");
      assert.match(
        (await page.text("#log .chain")) ?? "",
        /The audit chain holds: 6 lines, 0 receipts, 3 amendments checked/,
      );

      // An operator rewrites why the second amendment was made.
      packet.audit = false;
      const log = join(packet.stateRoot, "control", "log.jsonl");
      const text = await Deno.readTextFile(log);
      await Deno.writeTextFile(
        log,
        text.replace('"reason":"second"', '"reason":"<b>nothing</b>"'),
      );
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitForSelector("#log .chain[data-chain=broken]");
      const [line] = await page.attributes("#log .chain", "data-line");
      assert.equal(line, "2");
      const [kind] = await page.attributes("#log .chain", "data-kind");
      assert.equal(kind, "edited");
      assert.match(
        (await page.text("#log .chain")) ?? "",
        /The audit chain does not hold: control\/log\.jsonl line 2 \(edited\)/,
      );
      assert.equal(await page.text("#log .chain b"), null, "escaped");
      assert.deepEqual(page.errors, []);
    });
  },
});
