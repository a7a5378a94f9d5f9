/**
 * A pass over a bucket while its keys are put again (a live run's snapshot
 * is rewritten many times a second), against a real `nats-server`: each
 * key comes once, with its newest value, and a key deleted during the pass
 * is left out. (Series run 2 of issue 22: a run's snapshot put during
 * `status fleet:…`'s pass made the TARGET match "2 runs", both the same.)
 */

import assert from "node:assert/strict";
import { openLink } from "../../../lib/fleet/_load.ts";
import { scanBucket } from "../../../lib/fleet/_fleet_scan.ts";
import { parseFleetUrl } from "../../../lib/fleet/fleet_url.ts";
import { NATS_SERVER, NatsServers } from "../../_helpers/nats.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

Deno.test({
  name:
    "scanBucket() gives each key once, with its newest value, while a writer puts the keys again",
  ignore: NATS_SERVER === null,
}, async () => {
  await using servers = await NatsServers.start(1);
  const url = parseFleetUrl(servers.url());
  const writer = await openLink({ url, name: "writer", timeoutMs: 3_000 });
  const reader = await openLink({ url, name: "reader", timeoutMs: 3_000 });
  try {
    await writer.ensureBucket("SCAN", 1);
    const keys = ["n1.r1.a", "n1.r1.b", "n2.r2.c"];
    for (const key of keys) {
      await writer.kvPut("SCAN", key, encoder.encode("0"));
    }
    let writing = true;
    let puts = 0;
    const busy = (async () => {
      while (writing) {
        puts++;
        await writer.kvPut(
          "SCAN",
          keys[puts % keys.length]!,
          encoder.encode(String(puts)),
        );
      }
    })();
    busy.catch(() => {});
    for (let pass = 0; pass < 60; pass++) {
      const entries = await scanBucket(reader, "SCAN", ">");
      assert.deepEqual(
        entries.map((e) => e.key).sort(),
        [...keys].sort(),
        `pass ${pass}: each key once`,
      );
      for (const entry of entries) {
        assert.match(decoder.decode(entry.value), /^\d+$/);
      }
    }
    writing = false;
    await busy;
    assert.ok(puts > 60, `the writer put ${puts} values during the passes`);
    // Once quiet, a pass sees each key's newest value.
    const last = await scanBucket(reader, "SCAN", ">");
    const newest = Math.max(
      ...last.map((e) => Number(decoder.decode(e.value))),
    );
    assert.equal(newest, puts);
  } finally {
    await reader.close();
    await writer.close();
  }
});
