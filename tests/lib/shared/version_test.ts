import assert from "node:assert/strict";
import denoJson from "../../../deno.json" with { type: "json" };
import { VERSION } from "../../../lib/shared/version.ts";

Deno.test("VERSION equals the version in deno.json", () => {
  assert.equal(VERSION, denoJson.version);
});
