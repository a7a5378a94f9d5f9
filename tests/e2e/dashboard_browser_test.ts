/**
 * The dashboard (`prompt_runner serve`) in a real headless Chromium, against
 * real processes: a simulated run streaming in one process, the server in
 * another, the browser in a third. The page must show the run's events in
 * order with no gap or duplicate (also across a server restart), deliver a
 * steer and a view change through the control plane, refuse an amend
 * without a reason, render hostile agent text as text, and refuse requests
 * without the token or from another origin. Screenshots of the runs page
 * and a run page go to `.ci/.log/screenshots/`. Without Chromium the tests
 * are skipped, loudly; `.ci/run` installs it.
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
  storedSeqs,
  submit,
  waitForSeq,
  withBrowser,
} from "../_helpers/dashboard.ts";
import {
  listDir,
  readJsonl,
  readSnapshot,
  startRun,
} from "../_helpers/live_run.ts";
import { waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket, promptFile } from "../_helpers/temp_packet.ts";

/**
 * Fails unless `seqs` is strictly increasing with no gap from its first to
 * `last` (the DOM must hold every event in that span exactly once).
 */
function assertContiguous(seqs: number[], last: number, what: string): void {
  assert.ok(seqs.length > 0, `${what}: no event in the DOM`);
  const first = seqs[0]!;
  const expected = Array.from(
    { length: last - first + 1 },
    (_, i) => first + i,
  );
  if (JSON.stringify(seqs) !== JSON.stringify(expected)) {
    const dup = seqs.filter((s, i) => seqs.indexOf(s) !== i);
    const missing = expected.filter((s) => !seqs.includes(s));
    const disorder = seqs.findIndex((s, i) => i > 0 && s <= seqs[i - 1]!);
    assert.fail(
      `${what}: the DOM's data-seq are not ${first}..${last} once each, in ` +
        `order: duplicates ${JSON.stringify(dup)}, missing ${
          JSON.stringify(missing.slice(0, 20))
        }, first out of order at index ${disorder}`,
    );
  }
}

Deno.test({
  name:
    "the runs page links to the live run; its page shows the events in order, and a server killed and restarted on the same port mid-run resumes the stream with no gap or duplicate",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(100, 30) },
    });
    await using run = startRun(packet.dir);
    await run.until((e) => e.type === "run_started");
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    let server = await startDashboard([packet.dir, "--port", "0"]);
    try {
      await withBrowser(async (browser) => {
        const runs = await browser.open(server.url);
        await runs.waitForSelector(
          `#runs tr.run[data-run="${key}/${id}"] a.run-link`,
          `the run's row (${key}/${id}) with its link on the runs page`,
        );
        await runs.waitUntil(
          "the row's status to say running",
          `document.querySelector('#runs tr.run [data-field=status]')?.textContent.includes("running")`,
          SHOW_MS,
        );
        await runs.screenshot("dashboard-runs");
        await Promise.all([
          runs.page.waitForNavigation({ waitUntil: "load" }),
          runs.page.click(`#runs tr.run[data-run="${key}/${id}"] a.run-link`),
        ]);
        const page = runs;
        assert.equal(
          new URL(page.page.url()).pathname,
          `/run/${key}/${id}`,
        );
        await page.waitForSelector("#snapshot [data-field=status]");
        // Events appear within a bounded time, in order.
        const seen = (await storedSeqs(packet.stateRoot)).at(-1)!;
        await waitForSeq(page, seen);
        const before = await domSeqs(page);
        assertContiguous(before, before.at(-1)!, "before the restart");

        // Kill the server; the run goes on without it.
        await server.stop("SIGKILL");
        const downAt = (await storedSeqs(packet.stateRoot)).at(-1)!;
        await waitFor(
          "the run to write events while the server is down",
          async () =>
            (await storedSeqs(packet.stateRoot)).at(-1)! >= downAt + 5,
        );
        // Hold the runner while the new server starts, so the run is
        // certainly still live when the page reconnects.
        Deno.kill(run.child.pid, "SIGSTOP");
        try {
          server = await startDashboard([
            packet.dir,
            "--port",
            String(server.port),
          ]);
          // A new server has a new token: the operator opens its URL in
          // another tab, which replaces the cookie the first tab uses.
          const other = await browser.open(server.url);
          await other.page.close();
        } finally {
          Deno.kill(run.child.pid, "SIGCONT");
        }
        const done = await run.finish();
        assert.equal(done.code, 0, done.stderr);
        const stored = await storedSeqs(packet.stateRoot);
        const last = stored.at(-1)!;
        assert.deepEqual(stored, stored.map((_, i) => i + 1));
        assert.ok(last > downAt + 5, "the run went on after the restart");
        await page.waitForSelector(
          `#events .event[data-type="run_finished"][data-seq="${last}"]`,
          "the run's last event after the restart",
          SHOW_MS,
        );
        assertContiguous(await domSeqs(page), last, "after the restart");
        assert.ok((await domSeqs(page))[0]! <= before[0]!);
        // Rendered live piece by piece, the events read as the studio
        // renderer renders the whole span at once (tool names, streamed
        // text shown once, session totals).
        const shown = await domSeqs(page);
        const live = await page.evaluate<string[]>(
          `[...document.querySelectorAll("#events .event[data-seq] pre")].map((p) => p.textContent)`,
        );
        const whole = await page.evaluate<{ lines: string[] }[]>(
          `fetch(${
            JSON.stringify(
              `/run/${key}/${id}/rendered?from=${shown[0]}&to=${last}`,
            )
          }, { headers: { Accept: "application/json" } }).then((r) => r.json())`,
        );
        assert.deepEqual(
          live.join("\n").split("\n").filter((l) => l.trim() !== ""),
          whole.map((e) => e.lines.join("\n")).join("\n").split("\n")
            .filter((l) => l.trim() !== ""),
          "the page's events read as one rendering of the whole span",
        );
        // The panels end on the run's final state, here and on the runs page.
        await page.waitUntil(
          "the snapshot panel to say completed",
          `document.querySelector("#snapshot [data-field=status]")?.textContent.includes("completed")`,
          SHOW_MS,
        );
        const again = await browser.open(`${server.origin}/`);
        await again.waitUntil(
          "the runs page's row to say completed",
          `document.querySelector('#runs tr.run[data-run="${key}/${id}"] [data-field=status]')?.textContent.includes("completed")`,
          SHOW_MS,
        );
        assert.deepEqual(page.dialogs, []);
        assert.deepEqual(page.errors, []);
      });
    } finally {
      await server.stop("SIGKILL");
    }
  },
});

Deno.test({
  name:
    "a steer typed in the run page is delivered and shown applied; hiding thinking re-renders the events without it; an amend without a reason is refused by the page and by the server, and nothing is amended",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(150, 40) },
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
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}/run/${key}/${id}`);
      await page.waitForSelector("#steer-form");

      // Steer.
      const text = "please keep <b>it</b> short";
      await page.page.type("#steer-form [name=text]", text);
      await submit(page, "#steer-form", /^applied$/);
      const [record] = await readJsonl(
        join(packet.stateRoot, "interventions", "01.jsonl"),
      );
      assert.equal(record?.text, text);
      assert.equal(record?.author, "web:tester");
      const log = await readJsonl(
        join(packet.stateRoot, "control", "log.jsonl"),
      );
      const steers = log.filter((e) => e.command === "steer");
      assert.ok(
        steers.some((e) =>
          e.outcome === "applied" &&
          (e.params as { text?: string }).text === text &&
          e.author === "web:tester"
        ),
        JSON.stringify(steers),
      );
      await page.waitForSelector(
        "#log .log-entry[data-outcome=applied]",
        "the applied steer in the page's control log",
        SHOW_MS,
      );

      // View: thinking is shown, then hidden everywhere in #events.
      await page.waitUntil(
        "a thinking line in #events",
        `document.getElementById("events").textContent.includes("thinking it over")`,
        SHOW_MS,
      );
      await page.page.select("#view-form [name=thinking]", "hide");
      await submit(page, "#view-form", /^applied$/);
      // The plane makes the outcome durable before the runner applies it and
      // rewrites the snapshot (DESIGN §5), so the snapshot follows shortly.
      await waitFor(
        "the snapshot to show thinking: hide",
        async () =>
          ((await readSnapshot(packet.stateRoot))?.view as
            | { thinking?: string }
            | undefined)?.thinking === "hide",
      );
      const changedAt = (await storedSeqs(packet.stateRoot)).at(-1)!;
      await page.waitUntil(
        "the thinking lines to disappear from #events",
        `!document.getElementById("events").textContent.includes("thinking it over")`,
        SHOW_MS,
      );
      await waitForSeq(page, changedAt + 12);
      assert.equal(
        (await page.text("#events"))?.includes("thinking it over"),
        false,
        "events after the change show no thinking either",
      );
      assert.ok(
        (await page.text("#events"))?.includes("working on it"),
        "messages are still shown",
      );

      // Amend without a reason: refused in the page, nothing sent.
      const amendments = join(packet.stateRoot, "amendments");
      await page.page.select("#amend-form [name=prompt]", "01");
      await page.page.select("#amend-form [name=clause]", "files_exist");
      await page.page.type("#amend-form [name=value]", "NOTES.md");
      await submit(page, "#amend-form", /^refused: .*reason/);
      assert.deepEqual(
        page.requests.filter((r) =>
          r.method === "POST" && r.url.endsWith("/amend")
        ),
        [],
      );
      // And the server refuses it too when the page's check is bypassed.
      const answer = await page.evaluate<{ status: number; body: unknown }>(
        `fetch(${JSON.stringify(`/run/${key}/${id}/amend`)}, {
          method: "POST",
          headers: { Accept: "application/json",
            "Content-Type": "application/x-www-form-urlencoded" },
          body: "prompt=01&clause=files_exist&value=NOTES.md&reason=",
        }).then(async (r) => ({ status: r.status, body: await r.json() }))`,
      );
      assert.equal(answer.status, 400, JSON.stringify(answer));
      assert.equal(
        (answer.body as { outcome?: string }).outcome,
        "refused",
      );
      assert.match(
        String((answer.body as { reason?: string }).reason),
        /reason/i,
      );
      assert.deepEqual(
        (await listDir(amendments)).filter((n) => n.endsWith(".jsonl")),
        [],
      );
      const promptText = await Deno.readTextFile(
        join(packet.dir, "prompts", "01_long.prompt.md"),
      );
      assert.equal(promptText, longPrompt(150, 40));
      await page.screenshot("dashboard-run");
      assert.deepEqual(page.dialogs, []);
      assert.deepEqual(page.errors, []);
    });
    run.child.kill("SIGTERM");
    await run.finish();
  },
});

/** Agent messages that would run code if they were treated as HTML. */
const HOSTILE = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(2)>",
  "[docs](javascript:alert(3))",
];

/** What the page must not have made of the hostile messages. */
async function assertInert(page: TestPage, what: string): Promise<void> {
  const events = (await page.text("#events")) ?? "";
  for (const message of HOSTILE) {
    assert.ok(events.includes(message), `${what}: ${message} shown as text`);
  }
  assert.deepEqual(page.dialogs, [], `${what}: no dialog`);
  const toX = page.requests.filter((r) => {
    const path = new URL(r.url).pathname;
    return path.endsWith("/x") || r.url.startsWith("javascript:");
  });
  assert.deepEqual(toX, [], `${what}: no request to x`);
  assert.equal(
    await page.evaluate<number>(
      `document.querySelectorAll("#events script, #events img, #events a[href^='javascript'], #events [onerror]").length`,
    ),
    0,
    `${what}: no element made from agent text`,
  );
}

Deno.test({
  name:
    "hostile agent text (<script>, <img onerror>, javascript: links) renders as text, live and on reload; requests without the token get 401, from another origin 403",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: {
        "01_hostile.prompt.md": promptFile(`simulate:
  attempts:
    - delay_ms: 30
      repeat: 40
      messages: ${JSON.stringify(HOSTILE)}`),
      },
    });
    await using run = startRun(packet.dir);
    await run.until((e) => e.type === "run_started");
    const id = await runId(packet.stateRoot);
    const key = rootKey(packet.stateRoot);
    await using server = await startDashboard([packet.dir, "--port", "0"]);
    const runPath = `/run/${key}/${id}`;
    await withBrowser(async (browser) => {
      const page = await browser.open(server.url);
      await page.goto(`${server.origin}${runPath}`);
      const done = await run.finish();
      assert.equal(done.code, 0, done.stderr);
      const last = (await storedSeqs(packet.stateRoot)).at(-1)!;
      await waitForSeq(page, last);
      await assertInert(page, "live");
      await page.goto(`${server.origin}${runPath}`);
      await page.waitForSelector(`#events .event[data-seq="${last}"]`);
      await assertInert(page, "after a reload");

      // A browser with no token: 401, and no page.
      const stranger = await browser.browser.createBrowserContext();
      try {
        const tab = await stranger.newPage();
        const response = await tab.goto(`${server.origin}${runPath}`);
        assert.equal(response?.status(), 401);
        assert.match(
          response?.headers()["content-security-policy"] ?? "",
          /default-src 'self'/,
        );
      } finally {
        await stranger.close();
      }
    });

    // Without a browser: the token, the cookie, the origin check.
    const get = async (path: string, cookie?: string): Promise<Response> => {
      const response = await fetch(`${server.origin}${path}`, {
        redirect: "manual",
        headers: cookie ? { Cookie: cookie } : {},
      });
      await response.body?.cancel();
      return response;
    };
    assert.equal((await get("/")).status, 401);
    assert.equal((await get(`${runPath}/events`)).status, 401);
    assert.equal((await get("/?token=not-the-token")).status, 401);
    const login = await get(`/?token=${server.token}`);
    assert.equal(login.status, 303);
    const setCookie = login.headers.get("set-cookie") ?? "";
    assert.match(
      setCookie,
      new RegExp(`^pr_token_${server.port}=${server.token};`),
    );
    assert.match(setCookie, /HttpOnly/i);
    assert.match(setCookie, /SameSite=Strict/i);
    const cookie = `pr_token_${server.port}=${server.token}`;
    assert.equal((await get("/", cookie)).status, 200);
    const post = async (origin: string | null): Promise<number> => {
      const response = await fetch(`${server.origin}${runPath}/steer`, {
        method: "POST",
        redirect: "manual",
        headers: {
          Cookie: cookie,
          "Content-Type": "application/x-www-form-urlencoded",
          ...(origin === null ? {} : { Origin: origin }),
        },
        body: "text=from+elsewhere",
      });
      await response.body?.cancel();
      return response.status;
    };
    assert.equal(await post("http://evil.example"), 403);
    assert.equal(await post(null), 403);
    const steerGet = await get(`${runPath}/steer`, cookie);
    assert.equal(steerGet.status, 405);
    assert.equal(steerGet.headers.get("allow"), "POST");
    assert.deepEqual(
      (await readJsonl(join(packet.stateRoot, "control", "log.jsonl")))
        .filter((e) => e.command === "steer"),
      [],
      "a refused POST reaches no state root",
    );
  },
});
