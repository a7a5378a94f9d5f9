/**
 * A browser tab with recorders (console, dialogs, requests, errors) and
 * bounded waits: what {@linkcode BrowserSession.open} in `browser.ts` returns.
 *
 * @module
 */

import { join } from "node:path";
import type {
  ConsoleMessage,
  Dialog,
  HTTPRequest,
  Page,
} from "npm:puppeteer-core@25.16.0";
import { ROOT } from "./cli.ts";
import { errorText } from "../../lib/shared/errors.ts";

/** Where screenshots go (ignored by git: `.ci/.log/`). */
export const SCREENSHOT_DIR: string = join(ROOT, ".ci", ".log", "screenshots");

/** How long a wait lasts unless a test says otherwise. */
export const DEFAULT_WAIT_MS = 15_000;

/** A console message the page logged (CSP violations arrive here too). */
export interface ConsoleEntry {
  /** `log`, `error`, `warn`, … */
  type: string;
  /** Its text. */
  text: string;
}

/** A dialog the page opened (`alert`, `confirm`, …); the harness dismisses it. */
export interface DialogEntry {
  /** `alert`, `confirm`, `prompt` or `beforeunload`. */
  type: string;
  /** Its message. */
  message: string;
}

/** A request the page made. */
export interface RequestEntry {
  /** The full URL. */
  url: string;
  /** `GET`, `POST`, … */
  method: string;
  /** `document`, `script`, `image`, `eventsource`, `fetch`, … */
  resourceType: string;
}

/** A page opened by {@linkcode BrowserSession.open}, with what it did. */
export interface TestPage {
  /** The puppeteer page, for anything the harness does not wrap. */
  page: Page;
  /** Console messages, in order. */
  console: ConsoleEntry[];
  /** Dialogs, in order (each was dismissed). */
  dialogs: DialogEntry[];
  /** Every request the page made, in order. */
  requests: RequestEntry[];
  /** Uncaught exceptions in the page. */
  errors: string[];
  /** Navigates and waits for the load event; returns the HTTP status. */
  goto(url: string): Promise<number | null>;
  /**
   * Waits for `selector` to match (and be attached), at most `timeoutMs`;
   * fails with `what` and what the page logged.
   */
  waitForSelector(
    selector: string,
    what?: string,
    timeoutMs?: number,
  ): Promise<void>;
  /**
   * Evaluates the JavaScript expression `check` in the page until it is
   * truthy, at most `timeoutMs`; fails with `what` and what the page logged.
   * Returns the value (as JSON).
   */
  waitUntil<T = unknown>(
    what: string,
    check: string,
    timeoutMs?: number,
  ): Promise<T>;
  /** Evaluates the JavaScript expression `expression` in the page. */
  evaluate<T = unknown>(expression: string): Promise<T>;
  /** The values of attribute `name` on every match of `selector`. */
  attributes(selector: string, name: string): Promise<(string | null)[]>;
  /** The `textContent` of the first match of `selector` (`null` when none). */
  text(selector: string): Promise<string | null>;
  /** Saves a full-page PNG as `SCREENSHOT_DIR/<name>.png`; returns its path. */
  screenshot(name: string): Promise<string>;
  /** What the page logged, for failure messages. */
  describe(): string;
}

/** Wraps a puppeteer page with recorders and bounded waits. */
export function testPage(page: Page): TestPage {
  const consoleEntries: ConsoleEntry[] = [];
  const dialogs: DialogEntry[] = [];
  const requests: RequestEntry[] = [];
  const errors: string[] = [];
  page.on("console", (message: ConsoleMessage) => {
    consoleEntries.push({ type: message.type(), text: message.text() });
  });
  page.on("dialog", (dialog: Dialog) => {
    dialogs.push({ type: dialog.type(), message: dialog.message() });
    dialog.dismiss().catch(() => {});
  });
  page.on("request", (request: HTTPRequest) => {
    requests.push({
      url: request.url(),
      method: request.method(),
      resourceType: request.resourceType(),
    });
  });
  page.on("pageerror", (error: unknown) => {
    errors.push(errorText(error));
  });
  const describe = (): string =>
    [
      `page: ${page.url()}`,
      `console: ${JSON.stringify(consoleEntries.slice(-10))}`,
      `dialogs: ${JSON.stringify(dialogs)}`,
      `errors: ${JSON.stringify(errors.slice(-5))}`,
      `requests: ${
        JSON.stringify(requests.slice(-10).map((r) => `${r.method} ${r.url}`))
      }`,
    ].join("\n  ");
  const failed = (what: string, timeoutMs: number, error: unknown): Error =>
    new Error(
      `Timed out after ${timeoutMs} ms waiting for ${what}\n  ${describe()}\n  (${
        errorText(error).split("\n")[0]
      })`,
    );
  return {
    page,
    console: consoleEntries,
    dialogs,
    requests,
    errors,
    async goto(url: string): Promise<number | null> {
      const response = await page.goto(url, {
        waitUntil: "load",
        timeout: DEFAULT_WAIT_MS,
      });
      return response?.status() ?? null;
    },
    async waitForSelector(
      selector: string,
      what = `"${selector}"`,
      timeoutMs = DEFAULT_WAIT_MS,
    ): Promise<void> {
      try {
        await page.waitForSelector(selector, { timeout: timeoutMs });
      } catch (error) {
        throw failed(what, timeoutMs, error);
      }
    },
    async waitUntil<T = unknown>(
      what: string,
      check: string,
      timeoutMs = DEFAULT_WAIT_MS,
    ): Promise<T> {
      try {
        const handle = await page.waitForFunction(check, {
          timeout: timeoutMs,
          polling: 50,
        });
        const value = await handle.jsonValue() as T;
        await handle.dispose();
        return value;
      } catch (error) {
        throw failed(what, timeoutMs, error);
      }
    },
    async evaluate<T = unknown>(expression: string): Promise<T> {
      return await page.evaluate(expression) as T;
    },
    async attributes(
      selector: string,
      name: string,
    ): Promise<(string | null)[]> {
      return await page.$$eval(
        selector,
        (nodes, attribute) => nodes.map((node) => node.getAttribute(attribute)),
        name,
      );
    },
    async text(selector: string): Promise<string | null> {
      return await page.$eval(selector, (node) => node.textContent)
        .catch(() => null);
    },
    async screenshot(name: string): Promise<string> {
      await Deno.mkdir(SCREENSHOT_DIR, { recursive: true });
      const path = join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: path as `${string}.png`, fullPage: true });
      return path;
    },
    describe,
  };
}
