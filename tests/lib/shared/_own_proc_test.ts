import assert from "node:assert/strict";
import { ownProc } from "../../../lib/shared/_own_proc.ts";
import { hangupIgnored } from "../../../lib/shared/hangup.ts";
import { processStartTime } from "../../../lib/shared/run_lock.ts";

Deno.test({
  name:
    "ownProc() reads this process's stat and status once, for the start time and the SIGHUP disposition",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const first = ownProc();
    assert.equal(ownProc(), first, "read twice");
    const own = await first;
    assert.ok(own !== null);
    assert.ok(own.stat.startsWith(`${Deno.pid} (`), own.stat);
    assert.match(own.status, /^SigIgn:\s*[0-9a-f]+$/m);
    const start = await processStartTime(Deno.pid);
    assert.match(start ?? "", /^\d+$/);
    assert.equal(
      start,
      own.stat.slice(own.stat.lastIndexOf(") ") + 2).split(" ")[19],
    );
    assert.equal(typeof await hangupIgnored(), "boolean");
  },
});
