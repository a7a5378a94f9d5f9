import assert from "node:assert/strict";
import { duration } from "../../../lib/render/duration.ts";
import { duration as dashboardDuration } from "../../../commands/serve/page/shared.ts";

Deno.test("one duration format for people: ms under a second, tenths under a minute (no trailing .0), then m+s, then h+m", () => {
  const cases: [number, string][] = [
    [-5, "0ms"],
    [0, "0ms"],
    [850, "850ms"],
    [1500, "1.5s"],
    [4000, "4s"],
    [12_500, "12.5s"],
    [59_900, "59.9s"],
    [125_000, "2m05s"],
    [412_000, "6m52s"],
    [3_720_000, "1h02m"],
  ];
  for (const [ms, text] of cases) assert.equal(duration(ms), text, `${ms}`);
  // The dashboard writes it the same way (and a dash for none).
  for (const [ms, text] of cases.filter(([ms]) => ms >= 0)) {
    assert.equal(dashboardDuration(ms), text, `dashboard: ${ms}`);
  }
  assert.equal(dashboardDuration(null), "—");
});
