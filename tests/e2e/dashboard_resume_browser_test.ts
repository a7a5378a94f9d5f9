/**
 * The dashboard's run page of a run interrupted and then continued with
 * `run --resume`, in a real headless Chromium: the stream holds the
 * interrupted `run_finished` before the resumed runner's events, so the page
 * must not take that first end for the run's end. Without Chromium the test
 * is skipped, loudly; `.ci/run` installs it.
 */

import assert from "node:assert/strict";
import { CHROMIUM } from "../_helpers/browser.ts";
import {
  domSeqs,
  rootKey,
  runId,
  SHOW_MS,
  startDashboard,
  storedSeqs,
  waitForSeq,
  withBrowser,
} from "../_helpers/dashboard.ts";
import { readJsonl, startRun } from "../_helpers/live_run.ts";
import { waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";
import { join } from "node:path";

Deno.test({
  name:
    "a run page opened on an interrupted run shows it finished; opened after --resume, it follows the resumed run live to its end",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: {
        "01_quick.prompt.md": promptFile(
          "simulate: {attempts: [{messages: [done]}]}",
        ),
        "02_long.prompt.md": longPrompt(400, 30),
      },
    });
    const first = startRun(packet.dir);
    await first.until((e) => e.type === "run_started" && e.prompt_id === "02");
    first.child.kill("SIGINT");
    assert.equal((await first.finish()).code, 130);
    const id = await runId(packet.stateRoot);
    const end = (await storedSeqs(packet.stateRoot)).at(-1)!;
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([packet.dir, "--port", "0"]);
    await withBrowser(async (browser) => {
      const stopped = await browser.open(`${server.url}`);
      await stopped.page.goto(`${server.origin}/run/${key}/${id}`, {
        waitUntil: "load",
      });
      await waitForSeq(stopped, end);
      assert.equal(
        await stopped.evaluate(`document.body.hasAttribute("data-finished")`),
        true,
        "an interrupted run's page shows it finished",
      );

      await using resumed = startRun(packet.dir, ["--resume"]);
      await resumed.until((e) =>
        e.type === "prompt_started" && e.prompt_id === "02"
      );
      const page = await browser.open(`${server.origin}/run/${key}/${id}`);
      assert.equal(
        await page.evaluate(`document.body.hasAttribute("data-finished")`),
        false,
        "the resumed run's page is not finished at its interrupted end",
      );
      // Live: events the resumed runner writes after the page loaded.
      const loaded = (await domSeqs(page)).at(-1)!;
      await waitFor(
        "the resumed run to write past what the page loaded",
        async () => (await storedSeqs(packet.stateRoot)).at(-1)! > loaded + 5,
      );
      await waitForSeq(page, loaded + 5);
      resumed.child.kill("SIGTERM");
      assert.equal((await resumed.finish()).code, 143);
      const last = (await storedSeqs(packet.stateRoot)).at(-1)!;
      await page.waitForSelector(
        `#events .event[data-type="run_finished"][data-seq="${last}"]`,
        "the resumed run's own end",
        SHOW_MS,
      );
      await page.waitUntil(
        "the page to show the run finished",
        `document.body.hasAttribute("data-finished")`,
        SHOW_MS,
      );
      const ends = (await readJsonl(
        join(packet.stateRoot, "control", "events.jsonl"),
      )).filter((e) => e.type === "run_finished").map((e) => e.seq);
      assert.deepEqual(ends, [end, last]);
    });
  },
});
