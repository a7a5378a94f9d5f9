/**
 * Attention and budgets on the dashboard, in a real headless Chromium
 * against real processes: a run that stalls moves to the top of the runs
 * page with its reason, its run page shows why and the spend against its
 * budget, live, and the budget's stop is shown as it happens. Skipped,
 * loudly, without Chromium (`.ci/run` installs it).
 */

import assert from "node:assert/strict";
import { CHROMIUM } from "../_helpers/browser.ts";
import {
  rootKey,
  runId,
  SHOW_MS,
  startDashboard,
  withBrowser,
} from "../_helpers/dashboard.ts";
import { startRun } from "../_helpers/live_run.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

Deno.test({
  name:
    "a run that needs a person goes first on the runs page with its reason; its run page shows the attention and the spend against the budget, live",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using quiet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(300, 50) },
    });
    await using needy = await makePacket({
      manifest: "budget: {max_cost_usd: 0.03}",
      prompts: {
        "01_slow.prompt.md": promptFile(`progress_timeout_ms: 500
simulate:
  attempts:
    - delay_ms: 2500
      repeat: 4
      messages: ["thinking hard"]
      usage: {input_tokens: 10, output_tokens: 1, cost_usd: 0.02}`),
      },
    });
    await using first = startRun(quiet.dir);
    await first.until((e) => e.type === "run_started");
    await using second = startRun(needy.dir);
    await second.until((e) => e.type === "run_started");
    const quietKey = `${rootKey(quiet.stateRoot)}/${await runId(
      quiet.stateRoot,
    )}`;
    const needyKey = `${rootKey(needy.stateRoot)}/${await runId(
      needy.stateRoot,
    )}`;
    await using server = await startDashboard([
      quiet.dir,
      needy.dir,
      "--port",
      "0",
    ]);
    await withBrowser(async (browser) => {
      const runs = await browser.open(server.url);
      await runs.waitForSelector(`#runs tr.run[data-run="${quietKey}"]`);
      // The stall: the needy run's row moves to the top, with its reason.
      await runs.waitUntil(
        "the stalled run's row first, flagged",
        `(() => { const tr = document.querySelector("#runs tbody tr.run");
          return tr?.getAttribute("data-run") === ${
          JSON.stringify(needyKey)
        } && tr.getAttribute("data-attention") === "stalled" &&
          tr.querySelector("[data-field=attention]").textContent.startsWith("stalled on 01"); })()`,
        SHOW_MS,
      );
      await runs.screenshot("dashboard-attention-runs");
      // Its run page, opened now: the attention and the budget, then the
      // budget's stop, as they come.
      const page = await browser.open(
        `${server.origin}/run/${needyKey}`,
      );
      await page.waitUntil(
        "the budget's stop on the run page",
        `(() => { const dd = document.querySelector("#snapshot [data-field=attention]");
          return dd?.getAttribute("data-attention") === "budget_exhausted" &&
            dd.textContent.includes("budget.max_cost_usd of $0.0300 is spent"); })()`,
        SHOW_MS,
      );
      const budget = await page.evaluate<string>(
        `document.querySelector("#snapshot [data-field=budget]").textContent`,
      );
      assert.equal(budget, "$0.0400 of $0.0300 (the run's)");
      await page.screenshot("dashboard-attention-run");
      // The runs page says so too, still first.
      await runs.waitUntil(
        "the runs page's row to say budget exhausted, first",
        `document.querySelector("#runs tbody tr.run")?.getAttribute("data-attention") === "budget_exhausted"`,
        SHOW_MS,
      );
      assert.deepEqual(page.errors, []);
      assert.deepEqual(runs.errors, []);
    });
    assert.equal((await second.finish()).code, 1);
  },
});
