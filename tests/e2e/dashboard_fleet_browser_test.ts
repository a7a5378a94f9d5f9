/**
 * `serve --fleet` in a real headless Chromium (issue 21): a real
 * `nats-server`, two real `run --fleet` processes and a real `serve
 * --fleet`. The runs page lists both fleet runs and links to their pages;
 * a fleet run's page streams its events live, in order, and a steer typed
 * in its form is applied and shown in its control log; the fleet's
 * password is nowhere in the pages. Screenshots go to
 * `.ci/.log/screenshots/`. Skipped, loudly, without Chromium or
 * `nats-server`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { CHROMIUM } from "../_helpers/browser.ts";
import {
  domSeqs,
  SHOW_MS,
  submit,
  withBrowser,
} from "../_helpers/dashboard.ts";
import { readJsonl } from "../_helpers/live_run.ts";
import { NATS_SERVER } from "../_helpers/nats.ts";
import { waitFor } from "../_helpers/run_cli.ts";
import { PASSWORD, runPath, servedFleet } from "../_helpers/served_fleet.ts";

Deno.test({
  name:
    "in a browser, the fleet's runs page links to each fleet run; a run page streams its events live, in order, and a steer typed in it is applied and logged as web:NAME",
  ignore: CHROMIUM === null || NATS_SERVER === null,
  async fn(): Promise<void> {
    await using served = await servedFleet();
    const [run, other] = served.fleetRuns;
    const { origin, token } = served.dashboard;
    await withBrowser(async (browser) => {
      const runs = await browser.open(`${origin}/?token=${token}`);
      const row = (r: typeof run) =>
        `#runs tr.run[data-run="fleet:${r!.node}.${r!.root}/${r!.run_id}"]`;
      for (const r of [run, other]) {
        await runs.waitForSelector(
          `${row(r)} a.run-link`,
          `the fleet run ${r!.run_id}'s row with its link`,
        );
      }
      await runs.waitUntil(
        "the first run's row to say running",
        `document.querySelector(${
          JSON.stringify(`${row(run)} [data-field=status]`)
        })?.textContent.includes("running")`,
        SHOW_MS,
      );
      await runs.screenshot("dashboard-fleet-runs");
      assert.ok(!(await runs.page.content()).includes(PASSWORD));
      await Promise.all([
        runs.page.waitForNavigation({ waitUntil: "load" }),
        runs.page.click(`${row(run)} a.run-link`),
      ]);
      const page = runs;
      assert.equal(new URL(page.page.url()).pathname, runPath(run!));
      await page.waitForSelector("#snapshot [data-field=status]");
      // Live: events the run writes after the page opened arrive, in order.
      const first = (await domSeqs(page)).at(-1) ?? 0;
      await page.waitUntil(
        "events after the page opened",
        `Math.max(0, ...[...document.querySelectorAll("#events .event[data-seq]")].map((e) => Number(e.getAttribute("data-seq")))) >= ${
          first + 12
        }`,
        SHOW_MS,
      );
      const seqs = await domSeqs(page);
      assert.deepEqual(
        seqs,
        Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i),
        "the page's events, once each, in order",
      );
      // A steer through the fleet, typed as an operator would.
      const text = "fleet steer <i>from</i> the browser";
      await page.page.type("#steer-form [name=text]", text);
      await submit(page, "#steer-form", /^(applied|accepted)$/);
      const log = join(served.packets[0]!.stateRoot, "control", "log.jsonl");
      const logged = await waitFor(
        "the steer applied in the run's log",
        async () =>
          (await readJsonl(log)).find((e) =>
            e.command === "steer" && e.outcome === "applied" &&
            (e.params as { text?: string }).text === text
          ),
      );
      assert.equal(logged.author, "web:tester");
      await page.waitForSelector(
        "#log .log-entry[data-outcome=applied]",
        "the applied steer in the page's control log (from the fleet)",
        SHOW_MS,
      );
      assert.ok((await page.text("#log"))?.includes(text));
      await page.screenshot("dashboard-fleet-run");
      assert.ok(!(await page.page.content()).includes(PASSWORD));
      assert.deepEqual(page.dialogs, []);
      assert.deepEqual(page.errors, []);
    });
  },
});
