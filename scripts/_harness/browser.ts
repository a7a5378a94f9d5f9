/**
 * A real headless Chromium for tests, driven by puppeteer-core (test-only:
 * the product never imports it). The binary is Debian's `chromium`
 * (`.ci/run` installs it) or `$PROMPT_RUNNER_CHROMIUM`. Each browser gets a
 * private temporary profile (and home, so crashpad writes there too), and
 * closing it leaves no Chromium process behind, even when the test failed.
 *
 * @module
 */

import { join } from "node:path";
import { isExecutable, onPath } from "./on_path.ts";
import puppeteer, { type Browser, type Page } from "npm:puppeteer-core@25.16.0";
import { type TestPage, testPage } from "./browser_page.ts";

export type { Browser, Page };
export {
  type ConsoleEntry,
  DEFAULT_WAIT_MS,
  type DialogEntry,
  type RequestEntry,
  SCREENSHOT_DIR,
  type TestPage,
} from "./browser_page.ts";

/**
 * The Chromium binary: `$PROMPT_RUNNER_CHROMIUM` when set (it must then
 * exist: a wrong path fails loudly), else `chromium` (or
 * `chromium-browser`) on PATH, else `null`.
 */
export function findChromium(): string | null {
  const named = Deno.env.get("PROMPT_RUNNER_CHROMIUM");
  if (named) {
    if (!isExecutable(named)) {
      throw new Error(
        `PROMPT_RUNNER_CHROMIUM names "${named}", which is not an executable file`,
      );
    }
    return named;
  }
  return onPath("chromium", "chromium-browser");
}

/** The Chromium the browser tests use, or `null` (they are then skipped, loudly). */
export const CHROMIUM: string | null = findChromium();

if (CHROMIUM === null) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      "\n*** WARNING: Chromium is not installed: the browser tests are SKIPPED " +
        "(.ci/run installs it: apt-get install chromium) ***\n\n",
    ),
  );
}

/** A running headless Chromium; `await using` closes it. */
export interface BrowserSession extends AsyncDisposable {
  /** The puppeteer browser. */
  browser: Browser;
  /** The browser's main process id. */
  pid: number;
  /** Its private profile directory (removed on close). */
  profile: string;
  /** Opens a new tab on `url` (or a blank one), with its recorders on. */
  open(url?: string): Promise<TestPage>;
  /** The ids of the live processes of this browser (all of its tree). */
  processes(): Promise<number[]>;
  /** Closes the browser, kills what is left of it and removes its profile. */
  close(): Promise<void>;
}

/**
 * The live (not zombie) processes that belong to a browser: in its process
 * group, or naming its profile on their command line (crashpad, which
 * leaves the group, is started with a database under the profile's home).
 * Read with `ps`, since Deno refuses `/proc` without --allow-all.
 */
export async function browserProcesses(
  pid: number,
  profile: string,
): Promise<number[]> {
  const output = await new Deno.Command("ps", {
    args: ["-e", "-ww", "-o", "pid=,pgid=,stat=,args="],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!output.success) {
    throw new Error(`ps failed: ${new TextDecoder().decode(output.stderr)}`);
  }
  const found: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const match = line.match(/^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/);
    if (!match || match[3]!.startsWith("Z")) continue;
    const [id, group, args] = [Number(match[1]), Number(match[2]), match[4]!];
    if (group === pid || args.includes(profile)) found.push(id);
  }
  return found.sort((a, b) => a - b);
}

/** Sends `signal` to a process, ignoring one that is already gone. */
function signal(pid: number, name: Deno.Signal): void {
  try {
    Deno.kill(pid, name);
  } catch {
    // Gone already.
  }
}

/** Waits for `promise` at most `ms`; `undefined` when it took longer. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<void>((resolve) => timer = setTimeout(resolve, ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` every 50 ms until it is truthy or `timeoutMs` passed. */
async function poll(
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Options for {@linkcode launchBrowser}. */
export interface LaunchOptions {
  /** The viewport (default 1280×900). */
  viewport?: { width: number; height: number };
}

/**
 * Launches headless Chromium with a private temporary profile
 * (`--no-sandbox` only as root, where Chromium's sandbox cannot run).
 * Fails when Chromium is missing: guard tests with `ignore: !CHROMIUM`.
 */
export async function launchBrowser(
  options: LaunchOptions = {},
): Promise<BrowserSession> {
  if (CHROMIUM === null) {
    throw new Error(
      "Chromium is not installed: install Debian's chromium or set PROMPT_RUNNER_CHROMIUM",
    );
  }
  const profile = await Deno.makeTempDir({ prefix: "prompt_runner_chromium_" });
  const viewport = options.viewport ?? { width: 1280, height: 900 };
  let browser: Browser;
  try {
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      userDataDir: join(profile, "profile"),
      defaultViewport: viewport,
      timeout: 30_000,
      protocolTimeout: 30_000,
      args: [
        ...(Deno.uid() === 0 ? ["--no-sandbox"] : []),
        "--disable-dev-shm-usage",
        "--no-first-run",
      ],
      // A home of its own: crashpad's database and any dot-file stay inside.
      env: {
        ...Deno.env.toObject(),
        HOME: profile,
        XDG_CONFIG_HOME: join(profile, ".config"),
        XDG_CACHE_HOME: join(profile, ".cache"),
      },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
  } catch (error) {
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    throw error;
  }
  const pid = browser.process()?.pid;
  if (pid === undefined) throw new Error("Chromium started with no process id");
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      await within(browser.close().catch(() => {}), 5_000);
      let left = await browserProcesses(pid, profile);
      if (left.length > 0) {
        signal(-pid, "SIGKILL");
        for (const id of left) signal(id, "SIGKILL");
        await poll(
          async () => (await browserProcesses(pid, profile)).length === 0,
          10_000,
        );
        left = await browserProcesses(pid, profile);
      }
      await Deno.remove(profile, { recursive: true }).catch(() => {});
      if (left.length > 0) {
        throw new Error(
          `Chromium processes survived SIGKILL: ${left.join(", ")}`,
        );
      }
    })();
    return closed;
  };
  return {
    browser,
    pid,
    profile,
    async open(url?: string): Promise<TestPage> {
      const page = testPage(await browser.newPage());
      if (url !== undefined) await page.goto(url);
      return page;
    },
    processes: () => browserProcesses(pid, profile),
    close,
    [Symbol.asyncDispose]: close,
  };
}
