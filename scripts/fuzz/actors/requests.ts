/**
 * The bad request files the dropper writes: wrong values and types, deep
 * and huge JSON, names near the byte limit, written through a dot-temp
 * file and a rename or directly.
 *
 * @module
 */

import { join } from "node:path";
import { type Rng, sleep } from "../../_harness/mod.ts";
import { PROMPTS } from "../runs.ts";
import type { Fuzz } from "../state.ts";

const MAX_REQUEST_BYTES = 64 * 1024;
export const NAME_MAX = 255;

const WRONG_VALUES: unknown[] = [
  null,
  0,
  -1,
  1.5,
  1e308,
  true,
  false,
  "",
  " ",
  "x".repeat(5000),
  [],
  [1, "a"],
  {},
  { a: { b: 1 } },
];

export function validRequest(
  fuzz: Fuzz,
  runId: string,
): Record<string, unknown> {
  const steer = fuzz.rng.chance(0.5);
  return {
    v: 1,
    id: `fz-${fuzz.seq}`,
    command: steer ? "steer" : "set_view",
    params: steer ? { text: `fuzz steer ${fuzz.seq}` } : {
      [fuzz.rng.pick(["thinking", "diff"])]: fuzz.rng.pick([
        "hide",
        "show",
        "full",
        "stat",
      ]),
    },
    run_id: runId,
    author: "fuzz",
    issued_at: new Date().toISOString(),
    ...(fuzz.rng.chance(0.3) ? { prompt_id: fuzz.rng.pick(PROMPTS).id } : {}),
  };
}

export function deepJson(fuzz: Fuzz): string {
  const runId = JSON.stringify(fuzz.runId ?? "none");
  switch (fuzz.rng.int(0, 3)) {
    case 0: {
      const d = fuzz.rng.int(1000, 30_000);
      return "[".repeat(d) + "]".repeat(d);
    }
    case 1: {
      const d = fuzz.rng.int(1000, 11_000);
      return `{"v":1,"id":"x","command":"set_view","run_id":${runId},"author":"fuzz","params":` +
        '{"a":'.repeat(d) + "1" + "}".repeat(d) + "}";
    }
    case 2: {
      const d = fuzz.rng.int(1000, 11_000);
      return `{"v":1,"id":"x","command":"steer","run_id":${runId},"params":{"text":"deep"},"author":` +
        '{"a":'.repeat(d) + "1" + "}".repeat(d) + "}";
    }
    default: {
      const d = fuzz.rng.int(1000, 20_000);
      return `{"v":1,"command":"set_view","run_id":${runId},"params":{"thinking":` +
        "[".repeat(d) + "]".repeat(d) + "}}";
    }
  }
}

export function wrongTypes(fuzz: Fuzz): string {
  const request = validRequest(fuzz, fuzz.runId ?? "none");
  const fields = [
    "v",
    "id",
    "command",
    "params",
    "run_id",
    "author",
    "issued_at",
    "prompt_id",
  ];
  // Every field in turn, and one or two more at random.
  for (let n = fuzz.rng.int(0, 2); n >= 0; n--) {
    const field = n === 0
      ? fields[fuzz.seq % fields.length]!
      : fuzz.rng.pick(fields);
    if (fuzz.rng.chance(0.15)) delete request[field];
    // A copy: the shared values must never be changed (or made circular).
    else request[field] = structuredClone(fuzz.rng.pick(WRONG_VALUES));
  }
  if (
    fuzz.rng.chance(0.3) && typeof request.params === "object" &&
    request.params !== null
  ) {
    const key = fuzz.rng.pick([
      "text",
      "log_mode",
      "tool_output",
      "thinking",
      "diff",
      "bogus",
    ]);
    (request.params as Record<string, unknown>)[key] = structuredClone(
      fuzz.rng.pick(WRONG_VALUES),
    );
  }
  return JSON.stringify(request);
}

export function hugeJson(fuzz: Fuzz): string {
  const size = fuzz.rng.chance(0.2)
    ? MAX_REQUEST_BYTES + fuzz.rng.int(1, 2)
    : MAX_REQUEST_BYTES + fuzz.rng.int(1, 200 * 1024);
  const base = JSON.stringify(validRequest(fuzz, fuzz.runId ?? "none"));
  return fuzz.rng.chance(0.5)
    ? base + " ".repeat(Math.max(0, size - base.length))
    : "x".repeat(size);
}

/** A name of exactly `bytes` UTF-8 bytes, ending in `.json`, mixing one- and two-byte characters. */
export function nameOfBytes(prefix: string, bytes: number, rng: Rng): string {
  const encoder = new TextEncoder();
  let name = prefix;
  while (encoder.encode(name).length < bytes - 5) {
    const left = bytes - 5 - encoder.encode(name).length;
    name += left >= 2 && rng.chance(0.4) ? "é" : "a";
  }
  return name + ".json";
}

/** Writes content at `requests/name`: through a dot-temp file and a rename, or directly, in pieces. */
export async function writeRequestFile(
  fuzz: Fuzz,
  name: string,
  content: Uint8Array,
): Promise<boolean> {
  const path = join(fuzz.requests, name);
  try {
    if (fuzz.rng.chance(0.5)) {
      const temp = join(
        fuzz.requests,
        `.fz-${fuzz.seq}.${fuzz.rng.int(0, 1e9)}.tmp`,
      );
      await Deno.writeFile(temp, content, { createNew: true });
      try {
        await Deno.rename(temp, path);
      } catch (error) {
        await Deno.remove(temp);
        throw error;
      }
    } else {
      const file = await Deno.open(path, { write: true, createNew: true });
      try {
        const pieces = fuzz.rng.int(1, 3);
        const size = Math.ceil(content.length / pieces);
        for (let at = 0; at < content.length; at += size) {
          let chunk = content.subarray(at, at + size);
          while (chunk.length > 0) {
            chunk = chunk.subarray(await file.write(chunk));
          }
          if (at + size < content.length) await sleep(fuzz.rng.int(0, 30));
        }
      } finally {
        file.close();
      }
    }
    return true;
  } catch (error) {
    if (
      error instanceof Error &&
      /File name too long|ENAMETOOLONG/.test(error.message)
    ) {
      fuzz.unmakeable.push(name);
      return false;
    }
    throw error;
  }
}
