/**
 * A long run's page in a real headless Chromium: while it follows the
 * stream it keeps the newest 1,000 events (in blocks of at most 50), says
 * how many earlier ones it does not show, and brings them back 200 at a
 * time on request, in order, without moving what the reader is looking at.
 * Without Chromium the test is skipped, loudly.
 */

import assert from "node:assert/strict";
import { CHROMIUM, type TestPage } from "../_helpers/browser.ts";
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
import { startRun } from "../_helpers/live_run.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

const KEPT = 1_000;
const STEP = 200;

/** The `.earlier` note's count, or `null` when there is none. */
async function earlier(page: TestPage): Promise<number | null> {
  return await page.evaluate<number | null>(
    `(() => { const n = document.querySelector("#events .earlier"); return n ? Number(n.getAttribute("data-earlier")) : null; })()`,
  );
}

/** Consecutive seqs from `first` to `last`. */
function run(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

Deno.test({
  name:
    "a long run's page keeps its newest 1,000 events while following, in blocks, and shows earlier ones on request, in order, keeping the reader's place",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    // A wait (the page opens meanwhile), then ~1,500 events at once.
    await using packet = await makePacket({
      prompts: {
        "01_wait.prompt.md": promptFile(
          "simulate: {attempts: [{delay_ms: 6000, messages: [ready]}]}",
        ),
        "02_burst.prompt.md": longPrompt(260, 0),
      },
    });
    await using live = startRun(packet.dir);
    const finished = live.finish(); // reads its output all along
    const id = await runId(packet.stateRoot);
    await using server = await startDashboard([packet.dir, "--port", "0"]);
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(
        `${server.origin}/run/${rootKey(packet.stateRoot)}/${id}`,
      );
      assert.ok(
        (await domSeqs(page)).length < 10,
        "the page opened before the burst (a slower machine needs a longer wait)",
      );
      assert.equal((await finished).code, 0);
      const stored = await storedSeqs(packet.stateRoot);
      const last = stored.at(-1)!;
      assert.ok(last > KEPT + 2 * STEP, `${last} events`);
      await waitForSeq(page, last);

      // Following: the newest 1,000, consecutive, and a note for the rest.
      const kept = await domSeqs(page);
      assert.deepEqual(kept, run(last - KEPT + 1, last));
      assert.equal(await earlier(page), last - KEPT);
      const blocks = await page.evaluate<number[]>(
        `Array.from(document.querySelectorAll("#events .chunk"), (c) => c.querySelectorAll(".event").length)`,
      );
      assert.equal(
        blocks.reduce((a, b) => a + b, 0),
        KEPT,
        "every event in a block",
      );
      assert.ok(Math.max(...blocks) <= 50, `blocks of ${Math.max(...blocks)}`);

      // Earlier, on request: 200 before the first shown, and the event the
      // reader was looking at stays where it was.
      await page.evaluate(
        `document.getElementById("events").scrollTop = 0`,
      );
      const first = kept[0]!;
      const top = (seq: number) =>
        page.evaluate<number>(
          `document.querySelector('#events .event[data-seq="${seq}"]').getBoundingClientRect().top`,
        );
      const before = await top(first);
      await page.page.click("#events .show-earlier");
      await waitForSeq(page, first - STEP);
      assert.deepEqual(await domSeqs(page), run(first - STEP, last));
      assert.equal(await earlier(page), first - STEP - 1);
      assert.ok(
        Math.abs(await top(first) - before) <= 2,
        `the reader's place moved from ${before} to ${await top(first)}`,
      );

      // Scrolled up, nothing is dropped; clicking on reaches the first.
      while ((await earlier(page)) !== null) {
        const shown = (await domSeqs(page))[0]!;
        await page.page.click("#events .show-earlier");
        await waitForSeq(page, Math.max(1, shown - STEP));
      }
      assert.deepEqual(await domSeqs(page), stored);
      await page.waitUntil(
        "the page to settle",
        `document.querySelectorAll("#events .event[data-seq]").length === ${stored.length}`,
        SHOW_MS,
      );
      assert.deepEqual(page.errors, []);
    });
  },
});
