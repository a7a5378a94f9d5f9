/**
 * The dashboard's run page in a real headless Chromium, for what the page
 * does around a live run: `#events` follows the stream unless the user
 * scrolled up, a relaxation needs a reason and the explicit confirmation
 * and lands in the state root as the web author's, and a steer the plane
 * rejects shows the reason the control log gives, in the form and in
 * `#log`. Without Chromium the tests are skipped, loudly.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CHROMIUM, type TestPage } from "../_helpers/browser.ts";
import {
  domSeqs,
  rootKey,
  runId,
  SHOW_MS,
  startDashboard,
  submit,
  waitForSeq,
  withBrowser,
} from "../_helpers/dashboard.ts";
import { listDir, readJsonl, startRun } from "../_helpers/live_run.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** How far `#events` is from its bottom, in pixels. */
async function fromBottom(page: TestPage): Promise<number> {
  return await page.evaluate<number>(
    `(() => { const e = document.getElementById("events"); return e.scrollHeight - e.scrollTop - e.clientHeight; })()`,
  );
}

/** `#events`'s `scrollTop`. */
async function scrollTop(page: TestPage): Promise<number> {
  return await page.evaluate<number>(
    `document.getElementById("events").scrollTop`,
  );
}

/** Scrolls `#events` to `top` as a user would, and says where it ended. */
async function scrollEvents(page: TestPage, top: string): Promise<number> {
  return await page.evaluate<number>(
    `(() => { const e = document.getElementById("events"); e.scrollTop = ${top}; e.dispatchEvent(new Event("scroll")); return e.scrollTop; })()`,
  );
}

/** Waits until the page shows `more` events after the last one it shows. */
async function waitForMore(page: TestPage, more: number): Promise<number> {
  const seq = (await domSeqs(page)).at(-1)! + more;
  await waitForSeq(page, seq);
  return seq;
}

/** Clicks a form's submit button and returns the POST's JSON answer. */
async function answerOf(
  page: TestPage,
  action: string,
  expected: RegExp,
): Promise<{ answer: Record<string, unknown>; shown: string }> {
  const response = page.page.waitForResponse(
    (r) =>
      r.request().method() === "POST" && new URL(r.url()).pathname.endsWith(
        `/${action}`,
      ),
    { timeout: SHOW_MS },
  );
  const shown = await submit(page, `#${action}-form`, expected);
  return { answer: await (await response).json(), shown };
}

Deno.test({
  name:
    "the run page's events follow the stream to the bottom, stay where the user scrolled up while events arrive, and follow again once scrolled back down",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(400, 25) },
    });
    await using run = startRun(packet.dir);
    await run.until((e) => e.type === "run_started");
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([packet.dir, "--port", "0"]);
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitUntil(
        "#events to hold two screens of events",
        `(() => { const e = document.getElementById("events"); return e.scrollHeight > 2 * e.clientHeight + 200; })()`,
        SHOW_MS,
      );

      // Following: as events arrive, the view is at the very bottom.
      for (let i = 0; i < 3; i++) {
        const before = await scrollTop(page);
        await waitForMore(page, 6);
        assert.ok(
          await fromBottom(page) <= 1,
          `#events follows the stream (${await fromBottom(page)} px above)`,
        );
        assert.ok(await scrollTop(page) > before, "it scrolled with them");
      }

      // Scrolled up: new events leave the view where the user put it.
      const top = await scrollEvents(
        page,
        "Math.floor((e.scrollHeight - e.clientHeight) / 2)",
      );
      assert.ok(top > 0 && await fromBottom(page) > 200, "scrolled up");
      const heightBefore = await page.evaluate<number>(
        `document.getElementById("events").scrollHeight`,
      );
      await waitForMore(page, 18);
      assert.ok(
        await page.evaluate<number>(
          `document.getElementById("events").scrollHeight`,
        ) > heightBefore,
        "events were added below",
      );
      assert.equal(await scrollTop(page), top, "the view stayed put");

      // Back at the bottom: following resumes.
      await scrollEvents(page, "e.scrollHeight");
      assert.ok(await fromBottom(page) <= 1, "scrolled back to the bottom");
      const back = await scrollTop(page);
      await waitForMore(page, 12);
      assert.ok(
        await fromBottom(page) <= 1,
        `#events follows again (${await fromBottom(page)} px above)`,
      );
      assert.ok(await scrollTop(page) > back, "it scrolled with them again");
      assert.deepEqual(page.errors, []);
    });
    run.child.kill("SIGTERM");
    await run.finish();
  },
});

Deno.test({
  name:
    "a relaxation from the run page is refused in the page without the confirmation (nothing recorded); with it, the page shows the server's outcome and the amendment is recorded as web:<author>, direction relax",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: {
        "01_long.prompt.md": longPrompt(
          200,
          40,
          "verify: {files_exist: [NOTES.md]}",
        ),
      },
    });
    await using run = startRun(packet.dir);
    await run.until((e) => e.type === "run_started");
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([
      packet.dir,
      "--port",
      "0",
      "--author",
      "tester",
    ]);
    const amendments = join(packet.stateRoot, "amendments");
    const recorded = async (): Promise<string[]> =>
      (await listDir(amendments)).filter((n) => n.endsWith(".jsonl"));
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitForSelector("#relax-form");
      const reason = "NOTES.md is written by a later prompt";
      await page.page.select("#relax-form [name=prompt]", "01");
      await page.page.select("#relax-form [name=clause]", "files_exist");
      await page.page.type("#relax-form [name=reason]", reason);

      // Without the confirmation: refused in the page, nothing sent.
      await submit(page, "#relax-form", /^refused: .*confirm/);
      assert.deepEqual(
        page.requests.filter((r) =>
          r.method === "POST" && r.url.endsWith("/relax")
        ),
        [],
      );
      assert.deepEqual(await recorded(), []);

      // With it: the server's answer is shown, and the amendment lands.
      await page.page.click("#relax-form [name=confirm]");
      const { answer, shown } = await answerOf(page, "relax", /^recorded$/);
      assert.equal(answer.outcome, "recorded", JSON.stringify(answer));
      assert.equal(shown, answer.outcome);
      assert.deepEqual(await recorded(), ["01.jsonl"]);
      const records = await readJsonl(join(amendments, "01.jsonl"));
      assert.equal(records.length, 1, JSON.stringify(records));
      assert.equal(records[0]?.author, "web:tester");
      assert.equal(records[0]?.direction, "relax");
      assert.equal(records[0]?.clause, "files_exist");
      assert.equal(records[0]?.reason, reason);
      assert.equal(records[0]?.run_id, id);
      assert.deepEqual(page.dialogs, []);
      assert.deepEqual(page.errors, []);
    });
    run.child.kill("SIGTERM");
    await run.finish();
  },
});

Deno.test({
  name:
    "a steer the plane rejects (for a prompt that is not running, or past the steer budget) shows rejected with the control log's reason, in the form and in the page's log",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: {
        "01_long.prompt.md": longPrompt(200, 40, "recovery: {max_steers: 1}"),
        "02_next.prompt.md": promptFile("verify: {}"),
      },
    });
    await using run = startRun(packet.dir);
    await run.until((e) => e.type === "run_started");
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([
      packet.dir,
      "--port",
      "0",
      "--author",
      "tester",
    ]);
    const logged = async (requestId: unknown) =>
      (await readJsonl(join(packet.stateRoot, "control", "log.jsonl")))
        .filter((e) => e.request_id === requestId);
    const steer = async (
      page: TestPage,
      text: string,
      prompt: string,
      expected: RegExp,
    ): Promise<{ answer: Record<string, unknown>; shown: string }> => {
      await page.evaluate(
        `document.querySelector("#steer-form [name=text]").value = ""`,
      );
      await page.page.type("#steer-form [name=text]", text);
      await page.page.select("#steer-form [name=prompt]", prompt);
      return await answerOf(page, "steer", expected);
    };
    /** The rejection as the log records it, and as the page shows it. */
    const assertRejected = async (
      page: TestPage,
      result: { answer: Record<string, unknown>; shown: string },
      reason: RegExp,
    ): Promise<void> => {
      const entries = (await logged(result.answer.request_id)).filter((e) =>
        e.command === "steer" && e.outcome === "rejected"
      );
      assert.equal(entries.length, 1, JSON.stringify(entries));
      const why = String(entries[0]!.reason);
      assert.match(why, reason);
      assert.equal(result.shown, `rejected: ${why}`);
      const entry =
        `#log .log-entry[data-request="${result.answer.request_id}"][data-outcome=rejected]`;
      await page.waitForSelector(entry, "the rejection in #log", SHOW_MS);
      const text = (await page.text(entry)) ?? "";
      assert.ok(text.includes(why), `#log shows ${why}: ${text}`);
    };
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitForSelector("#steer-form");

      // For a prompt that is not running.
      await assertRejected(
        page,
        await steer(page, "start on the next one", "02", /^rejected: /),
        /prompt 02.*prompt 01 is running/,
      );
      // Within the budget of one, then past it.
      const first = await steer(page, "keep it short", "", /^applied$/);
      assert.equal(first.answer.outcome, "applied");
      await assertRejected(
        page,
        await steer(page, "and shorter", "", /^rejected: /),
        /steer budget spent: 1\/1/,
      );
      assert.equal(
        (await readJsonl(join(packet.stateRoot, "interventions", "01.jsonl")))
          .length,
        1,
        "only the steer within budget was delivered",
      );
      assert.deepEqual(page.dialogs, []);
      assert.deepEqual(page.errors, []);
    });
    run.child.kill("SIGTERM");
    await run.finish();
  },
});
