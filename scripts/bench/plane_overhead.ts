#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Replaced by `runner_throughput.ts` (the same question, at 20,000 events,
 * with a follower and a poller in subprocesses); kept so `deno task bench`
 * still runs until the task lists every benchmark.
 *
 * @module
 */

import { main } from "./runner_throughput.ts";

if (import.meta.main) await main();
