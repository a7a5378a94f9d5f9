/**
 * The prompt_runner version, as code outside the entry points reads it
 * (lib never imports `deno.json`).
 *
 * @module
 */

/**
 * The prompt_runner version: the `"version"` of `deno.json` (a test keeps
 * the two equal). Agents see it as the client's version, e.g. in codex
 * app-server's `initialize`.
 *
 * @example Usage
 * ```ts
 * import { VERSION } from "./version.ts";
 * import assert from "node:assert/strict";
 *
 * assert.match(VERSION, /^\d+\.\d+\.\d+/);
 * ```
 */
export const VERSION = "0.1.0";
