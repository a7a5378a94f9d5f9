/**
 * The fuzz's shared state: its paths, its random source, the request
 * files it dropped and the links it planted.
 *
 * @module
 */

import type { Rng, Violations } from "../_harness/mod.ts";

/** A request file the fuzzer made. */
export interface Dropped {
  /** Its name in `requests/`. */
  name: string;
  /** What it is. */
  kind: string;
  /** When it was in place (ms since the epoch). */
  at: number;
}

export interface Fuzz {
  dir: string;
  packet: string;
  stateRoot: string;
  requests: string;
  canary: string;
  saved: string;
  rng: Rng;
  violations: Violations;
  dropped: Dropped[];
  /** Names that could not be made (too long for the file system). */
  unmakeable: string[];
  /** Names the runner cannot represent (not UTF-8): made through bash. */
  unrepresentable: { name: string; at: number }[];
  byKind: Map<string, number>;
  plants: { path: string; target: string }[];
  hardPlants: { path: string; target: string }[];
  runId: string | null;
  previousRunId: string | null;
  stop: boolean;
  seq: number;
  savedSeq: number;
  live: Set<Deno.ChildProcess>;
}
