/**
 * Helpers for the dashboard's browser tests: a `prompt_runner serve`
 * process, the run it shows, and the page's forms and events.
 *
 * @module
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import {
  type BrowserSession,
  launchBrowser,
  type TestPage,
} from "./browser.ts";
import { LineReader, readAll } from "./lines.ts";
import { readJsonl, waitForSnapshot } from "./live_run.ts";
import { spawnCli } from "./run_cli.ts";

/** How long the page may take to show what the run wrote. */
export const SHOW_MS = 20_000;

/** A `prompt_runner serve` process and the URL it printed. */
export interface Dashboard extends AsyncDisposable {
  /** The server process. */
  child: Deno.ChildProcess;
  /** `http://127.0.0.1:PORT`. */
  origin: string;
  /** The port it listens on. */
  port: number;
  /** The access token it printed. */
  token: string;
  /** The whole URL of its first stdout line. */
  url: string;
  /** Kills it (default SIGTERM) and waits for it to exit. */
  stop(signal?: Deno.Signal): Promise<void>;
}

/**
 * Starts `prompt_runner serve ARGS` and reads its first stdout line,
 * `dashboard: http://HOST:PORT/?token=TOKEN`, within 30 s.
 */
export async function startDashboard(args: string[]): Promise<Dashboard> {
  const child = spawnCli(["serve", ...args]);
  const lines = new LineReader(child.stdout);
  const stderrText = readAll(child.stderr);
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async (signal: Deno.Signal = "SIGTERM"): Promise<void> => {
    if (!exited) {
      try {
        child.kill(signal);
      } catch {
        // Gone already.
      }
    }
    const timer = setTimeout(() => {
      if (!exited) child.kill("SIGKILL");
    }, 5_000);
    try {
      await status;
    } finally {
      clearTimeout(timer);
    }
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const first = await Promise.race([
    lines.next(),
    new Promise<"timeout">((resolve) =>
      timer = setTimeout(() => resolve("timeout"), 30_000)
    ),
  ]).finally(() => clearTimeout(timer));
  const match = typeof first === "string"
    ? first.match(
      /^dashboard: ((http:\/\/127\.0\.0\.1:(\d+))\/\?token=([\w-]+))$/,
    )
    : null;
  if (!match) {
    await stop("SIGKILL");
    await lines.rest().catch(() => []);
    throw new Error(
      `serve ${args.join(" ")} printed no URL line first (got ${
        JSON.stringify(first)
      }); stderr:\n${await stderrText}`,
    );
  }
  // The server may print human notes later: keep its stdout drained.
  const drained = lines.rest().catch(() => []);
  const stopAll = async (signal?: Deno.Signal): Promise<void> => {
    await stop(signal);
    await drained;
    await stderrText;
  };
  return {
    child,
    url: match[1]!,
    origin: match[2]!,
    port: Number(match[3]),
    token: match[4]!,
    stop: stopAll,
    [Symbol.asyncDispose]: () => stopAll("SIGKILL"),
  };
}

/** The URL key of a state root that is not a workspace's (serve spec). */
export function rootKey(stateRoot: string): string {
  return "r-" +
    createHash("sha256").update(stateRoot).digest("hex").slice(0, 12);
}

/** The run id the state root's snapshot names, once it has one. */
export async function runId(stateRoot: string): Promise<string> {
  const snapshot = await waitForSnapshot(
    stateRoot,
    "a snapshot with a run id",
    (s) => typeof s.run_id === "string",
  );
  return String(snapshot.run_id);
}

/** The seqs of the run's stored events, in file order. */
export async function storedSeqs(stateRoot: string): Promise<number[]> {
  return (await readJsonl(join(stateRoot, "control", "events.jsonl")))
    .map((e) => Number(e.seq));
}

/** The `data-seq` of every `.event` in `#events`, in DOM order. */
export async function domSeqs(page: TestPage): Promise<number[]> {
  return (await page.attributes("#events .event[data-seq]", "data-seq"))
    .map(Number);
}

/** Waits until the DOM shows the event with seq `seq`. */
export async function waitForSeq(page: TestPage, seq: number): Promise<void> {
  await page.waitForSelector(
    `#events .event[data-seq="${seq}"]`,
    `event ${seq} in #events`,
    SHOW_MS,
  );
}

/** Submits a form by its button and waits for its outcome to match. */
export async function submit(
  page: TestPage,
  form: string,
  expected: RegExp,
): Promise<string> {
  await page.page.click(`${form} [type=submit]`);
  const selector = `${form} output.outcome`;
  return await page.waitUntil<string>(
    `${form}'s outcome to match ${expected}`,
    `(() => { const t = document.querySelector(${
      JSON.stringify(selector)
    })?.textContent ?? ""; return new RegExp(${
      JSON.stringify(expected.source)
    }).test(t) ? t : false; })()`,
    SHOW_MS,
  );
}

/** Runs `fn` with a browser, closing it (and proving it closed) after. */
export async function withBrowser(
  fn: (browser: BrowserSession) => Promise<void>,
): Promise<void> {
  const browser = await launchBrowser();
  try {
    await fn(browser);
  } finally {
    await browser.close();
  }
  assert.deepEqual(await browser.processes(), [], "no Chromium process left");
}
