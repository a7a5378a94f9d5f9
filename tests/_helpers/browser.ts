/**
 * A real headless Chromium for tests: the scripts' harness owns it (the
 * dashboard bench drives it too).
 *
 * @module
 */

export * from "../../scripts/_harness/browser.ts";
