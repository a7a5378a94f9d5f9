/**
 * The browser harness itself (scripts/_harness/browser.ts), against a tiny
 * page served by the test with a strict CSP: it sees an inline script
 * blocked, an alert from an allowed script, every request, takes a
 * screenshot, and leaves no Chromium process behind — also when a wait
 * failed or the browser hung. Without Chromium the tests are
 * skipped, loudly; `.ci/run` installs it.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import {
  browserProcesses,
  CHROMIUM,
  launchBrowser,
  SCREENSHOT_DIR,
} from "../_helpers/browser.ts";
import { ROOT } from "../_helpers/run_cli.ts";

const CSP = "default-src 'self'; script-src 'self'; img-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'";

const PAGE = `<!doctype html>
<html><head><title>harness</title>
<script>document.title = "inline ran";</script>
<script src="/allowed.js" defer></script>
</head><body><p id="note">static text</p></body></html>`;

const ALLOWED_JS = `
fetch("/ping?from=script").then((r) => r.text()).then((text) => {
  document.getElementById("note").textContent = text;
  alert("allowed script says hi");
  document.body.dataset.ready = "yes";
});
`;

/** A PNG's first eight bytes. */
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Serves the tiny page on 127.0.0.1; `await using` shuts it down. */
function servePage(): AsyncDisposable & { origin: string; hits: string[] } {
  const hits: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => {
      const url = new URL(request.url);
      hits.push(url.pathname + url.search);
      const headers = { "Content-Security-Policy": CSP };
      if (url.pathname === "/") {
        return new Response(PAGE, {
          headers: { ...headers, "Content-Type": "text/html; charset=utf-8" },
        });
      }
      if (url.pathname === "/allowed.js") {
        return new Response(ALLOWED_JS, {
          headers: { ...headers, "Content-Type": "text/javascript" },
        });
      }
      if (url.pathname === "/ping") {
        return new Response("pong", { headers });
      }
      return new Response("not found", { status: 404, headers });
    },
  );
  return {
    origin: `http://127.0.0.1:${server.addr.port}`,
    hits,
    async [Symbol.asyncDispose](): Promise<void> {
      await server.shutdown();
    },
  };
}

Deno.test({
  name:
    "the harness sees a CSP-blocked inline script, an alert from an allowed script, every request, saves a screenshot and leaves no Chromium process",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using site = servePage();
    const browser = await launchBrowser();
    const { pid, profile } = browser;
    try {
      const page = await browser.open(`${site.origin}/`);
      await page.waitUntil(
        "the allowed script to finish",
        `document.body.dataset.ready === "yes"`,
      );
      // The inline script was refused by the CSP, and the harness saw why.
      assert.equal(await page.page.title(), "harness");
      assert.ok(
        page.console.some((m) =>
          m.type === "error" && /Content Security Policy/.test(m.text) &&
          /inline script/i.test(m.text)
        ),
        page.describe(),
      );
      assert.deepEqual(page.dialogs, [
        { type: "alert", message: "allowed script says hi" },
      ]);
      assert.equal(await page.text("#note"), "pong");
      const paths = page.requests.map((r) =>
        `${r.method} ${new URL(r.url).pathname} ${r.resourceType}`
      );
      assert.deepEqual(
        paths.filter((p) => !p.includes("favicon")),
        ["GET / document", "GET /allowed.js script", "GET /ping fetch"],
      );
      assert.ok(site.hits.includes("/ping?from=script"));
      const shot = await page.screenshot("harness");
      assert.ok(shot.startsWith(SCREENSHOT_DIR));
      const bytes = await Deno.readFile(shot);
      assert.deepEqual([...bytes.subarray(0, 8)], PNG_MAGIC);
      await Deno.remove(shot);
      assert.ok((await browser.processes()).length >= 2, "a browser tree runs");
    } finally {
      await browser.close();
    }
    assert.deepEqual(await browserProcesses(pid, profile), []);
    await assert.rejects(Deno.stat(profile), Deno.errors.NotFound);
  },
});

Deno.test({
  name:
    "a bounded wait fails with what it waited for and what the page logged; close() still leaves no Chromium process",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using site = servePage();
    const browser = await launchBrowser();
    const { pid, profile } = browser;
    try {
      const page = await browser.open(`${site.origin}/`);
      await assert.rejects(
        page.waitForSelector("#never", "a section that never comes", 300),
        (error: Error) => {
          assert.match(
            error.message,
            /^Timed out after 300 ms waiting for a section that never comes/,
          );
          assert.match(error.message, /dialogs: .*allowed script says hi/s);
          return true;
        },
      );
      await assert.rejects(
        page.waitUntil("a condition never true", "false", 300),
        /Timed out after 300 ms waiting for a condition never true/,
      );
    } finally {
      await browser.close();
    }
    assert.deepEqual(await browserProcesses(pid, profile), []);
  },
});

Deno.test({
  name:
    "a hung Chromium (main process stopped) is killed by close() with its whole tree",
  ignore: CHROMIUM === null,
  async fn(): Promise<void> {
    await using site = servePage();
    const browser = await launchBrowser();
    const { pid, profile } = browser;
    try {
      await browser.open(`${site.origin}/`);
      const tree = await browser.processes();
      assert.ok(tree.includes(pid) && tree.length >= 3, String(tree));
      Deno.kill(pid, "SIGSTOP");
    } finally {
      await browser.close();
    }
    assert.deepEqual(await browserProcesses(pid, profile), []);
    await assert.rejects(Deno.stat(profile), Deno.errors.NotFound);
  },
});

/** Every `.ts` file under `dir`, relative to the repository root. */
async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory && !entry.name.startsWith(".")) {
      found.push(...await sources(path));
    } else if (entry.isFile && entry.name.endsWith(".ts")) {
      found.push(relative(ROOT, path));
    }
  }
  return found;
}

Deno.test("the test-only npm packages (puppeteer-core; the NATS JWT and nkeys tools) are imported only where named, pinned, and never by the product", async () => {
  const files = [
    "main.ts",
    "mod.ts",
    ...await sources(join(ROOT, "lib")),
    ...await sources(join(ROOT, "commands")),
    ...await sources(join(ROOT, "scripts")),
    ...await sources(join(ROOT, "tests")),
  ];
  const importers: string[] = [];
  for (const file of files) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const [, specifier] of text.matchAll(/from\s+"(npm:[^"]+)"/g)) {
      if (!/^npm:yaml(@|$)/.test(specifier!)) {
        importers.push(`${file}: ${specifier}`);
      }
    }
  }
  assert.deepEqual(importers.sort(), [
    "scripts/_harness/browser.ts: npm:puppeteer-core@25.16.0",
    "scripts/_harness/browser_page.ts: npm:puppeteer-core@25.16.0",
    "tests/e2e/fleet_creds_test.ts: npm:@nats-io/jwt@0.0.11",
    "tests/e2e/fleet_creds_test.ts: npm:@nats-io/nkeys@2.0.3",
  ]);
  const config = await Deno.readTextFile(join(ROOT, "deno.json"));
  assert.doesNotMatch(config, /puppeteer|playwright|@nats-io\/(jwt|nkeys)/);
});
