/**
 * Reads that race a stream's making, against a real `nats-server`: Debian's
 * 2.9.10 lists a new stream before its store exists, and a `STREAM.MSG.GET`
 * in that window kills the server (a nil store). The fleet's reads must
 * never send one there, however a bridge's making and a client's reads
 * interleave.
 */

import assert from "node:assert/strict";
import { openLink } from "../../../lib/fleet/_load.ts";
import { parseFleetUrl } from "../../../lib/fleet/fleet_url.ts";
import { NATS_SERVER, NatsServers } from "../../_helpers/nats.ts";

const ROUNDS = 40;

Deno.test({
  name:
    "reads of a bucket and a stream while another connection makes them find nothing, then what was put; the server lives",
  ignore: NATS_SERVER === null,
}, async () => {
  await using servers = await NatsServers.start(1);
  const url = parseFleetUrl(servers.url());
  const maker = await openLink({ url, name: "maker", timeoutMs: 3_000 });
  const reader = await openLink({ url, name: "reader", timeoutMs: 3_000 });
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const bucket = `BIRTH${round}`;
      const stream = `BIRTH_EV${round}`;
      const subject = `birth.${round}.a`;
      let making = true;
      let reads = 0;
      const racing = (async () => {
        while (making) {
          await reader.kvGet(bucket, "k");
          await reader.lastMessage(stream, subject);
          await reader.nextMessage(stream, subject, 1);
          reads++;
        }
      })();
      // Its failure is the test's, when awaited below.
      racing.catch(() => {});
      // The reader's first reads find nothing to race with.
      while (reads === 0) await new Promise((r) => setTimeout(r, 1));
      await maker.ensureBucket(bucket, 1);
      await maker.ensureStream({
        name: stream,
        subjects: [`birth.${round}.>`],
        replicas: 1,
        workQueue: false,
      });
      making = false;
      await racing;
      assert.equal(servers.nodes[0]!.crashed, undefined, "the server died");
      await maker.kvPut(bucket, "k", new TextEncoder().encode(`v${round}`));
      const sent = await maker.request(
        subject,
        new TextEncoder().encode(`m${round}`),
        { timeoutMs: 5_000 },
      );
      assert.match(new TextDecoder().decode(sent.data), /"seq":1/);
      const value = await reader.kvGet(bucket, "k");
      assert.equal(new TextDecoder().decode(value?.value), `v${round}`);
      const last = await reader.lastMessage(stream, subject);
      assert.equal(new TextDecoder().decode(last?.data), `m${round}`);
      const first = await reader.nextMessage(stream, subject, 1);
      assert.equal(first?.seq, 1);
    }
  } finally {
    await reader.close();
    await maker.close();
  }
});
