/**
 * The dropper: drops every kind of bad request file into
 * `control/requests/` while the runs stream.
 *
 * @module
 */

import { join } from "node:path";
import { readAll, sleep } from "../../_harness/mod.ts";
import type { Fuzz } from "../state.ts";
import {
  deepJson,
  hugeJson,
  NAME_MAX,
  nameOfBytes,
  validRequest,
  writeRequestFile,
  wrongTypes,
} from "./requests.ts";
import { errorText } from "../../../lib/shared/errors.ts";

async function spawnQuiet(
  fuzz: Fuzz,
  command: string,
  args: string[],
): Promise<boolean> {
  const child = new Deno.Command(command, {
    args,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  fuzz.live.add(child);
  const [status, err] = await Promise.all([
    child.status,
    readAll(child.stderr),
  ]);
  fuzz.live.delete(child);
  if (!status.success) {
    fuzz.violations.add(
      "harness",
      `${command} ${args.join(" ")}: ${err.trim()}`,
    );
  }
  return status.success;
}

const encoder = new TextEncoder();

/** Drops one file (or a colliding pair) of a random kind. */
async function dropOne(fuzz: Fuzz): Promise<void> {
  const rng = fuzz.rng;
  const n = ++fuzz.seq;
  const kinds = [
    "random bytes",
    "empty",
    "huge",
    "deeply nested",
    "wrong types",
    "other run",
    "valid",
    "long name",
    "odd name",
    "collide: space/underscore",
    "collide: accents",
    "collide: with/without .json",
    "no .json",
    "symlink to file",
    "symlink to dir",
    "dangling symlink",
    "directory with links",
    "fifo",
    "not UTF-8 name",
  ];
  const kind = rng.pick(kinds);
  fuzz.byKind.set(kind, (fuzz.byKind.get(kind) ?? 0) + 1);
  const record = (name: string): void => {
    fuzz.dropped.push({ name, kind, at: Date.now() });
  };
  const file = async (
    name: string,
    text: string | Uint8Array,
  ): Promise<void> => {
    const bytes = typeof text === "string" ? encoder.encode(text) : text;
    if (await writeRequestFile(fuzz, name, bytes)) record(name);
  };
  const valid = (): string =>
    JSON.stringify(validRequest(fuzz, fuzz.runId ?? "none"));
  const base = `fz${String(n).padStart(5, "0")}`;
  switch (kind) {
    case "random bytes":
      return await file(`${base}-rand.json`, rng.bytes(rng.int(1, 3000)));
    case "empty":
      return await file(`${base}-empty.json`, "");
    case "huge":
      return await file(`${base}-huge.json`, hugeJson(fuzz));
    case "deeply nested":
      return await file(`${base}-deep.json`, deepJson(fuzz));
    case "wrong types":
      return await file(`${base}-types.json`, wrongTypes(fuzz));
    case "other run": {
      const runId = rng.chance(0.5) && fuzz.previousRunId !== null
        ? fuzz.previousRunId
        : `20261130T000000000Z-other${n}`;
      return await file(
        `${base}-other.json`,
        JSON.stringify(validRequest(fuzz, runId)),
      );
    }
    case "valid":
      return await file(`${base}-valid.json`, valid());
    case "long name": {
      const bytes = rng.chance(0.1)
        ? NAME_MAX + rng.int(1, 10)
        : rng.int(NAME_MAX - 15, NAME_MAX);
      return await file(nameOfBytes(`${base}-long-`, bytes, rng), valid());
    }
    case "odd name": {
      const odd = rng.pick([
        "a\nb",
        "tab\there",
        "quote\"'",
        "back\\slash",
        "..",
        "-dash",
        "emoji-🙂",
        "rtl-\u202e",
        "nul-ish-\u0001",
        "space ",
      ]);
      return await file(`${base}-${odd}.json`, valid());
    }
    case "collide: space/underscore":
      await file(`${base} a b.json`, valid());
      return await file(`${base}_a_b.json`, valid());
    case "collide: accents":
      await file(`${base}-é.json`, valid());
      await file(`${base}-ü.json`, valid());
      return await file(`${base}-e\u0301.json`, valid());
    case "collide: with/without .json":
      await file(`${base}-x`, valid());
      return await file(`${base}-x.json`, valid());
    case "no .json":
      return await file(
        rng.pick([
          `${base}-noext`,
          `${base}.txt`,
          `${base}.JSON`,
          `${base}.json.bak`,
        ]),
        valid(),
      );
    case "symlink to file":
    case "symlink to dir":
    case "dangling symlink": {
      const target = kind === "symlink to file"
        ? join(
          fuzz.canary,
          rng.pick(["secret.txt", "log.jsonl", "dir/inner.txt"]),
        )
        : kind === "symlink to dir"
        ? join(fuzz.canary, rng.pick(["dir", "empty", "dir/sub"]))
        : join(fuzz.canary, `missing-${n}.json`);
      const name = `${base}-link.json`;
      await Deno.symlink(target, join(fuzz.requests, name));
      return record(name);
    }
    case "directory with links": {
      const name = `${base}-dir.json`;
      // Built under a dot-name the runner skips, then moved into place at
      // once: a directory made in place could be refused and removed by the
      // runner before its links were planted.
      const path = join(fuzz.requests, `.${name}.building`);
      await Deno.mkdir(join(path, "sub"), { recursive: true });
      await Deno.symlink(
        join(fuzz.canary, "secret.txt"),
        join(path, "to-file.json"),
      );
      await Deno.symlink(join(fuzz.canary, "dir"), join(path, "to-dir"));
      await Deno.symlink(join(fuzz.canary, "dir"), join(path, "sub", "to-dir"));
      await Deno.symlink(
        join(fuzz.canary, `missing-${n}`),
        join(path, "sub", "dangling"),
      );
      await Deno.writeTextFile(join(path, "inner.json"), valid());
      await Deno.rename(path, join(fuzz.requests, name));
      return record(name);
    }
    case "fifo": {
      const name = `${base}-fifo.json`;
      if (await spawnQuiet(fuzz, "mkfifo", [join(fuzz.requests, name)])) {
        record(name);
      }
      return;
    }
    case "not UTF-8 name": {
      // Deno cannot name such a file; bash can. The runner sees U+FFFD in its place.
      const tail = rng.pick(["\\xff", "\\xfe\\xfd", "\\xc3\\x28"]);
      const ok = await spawnQuiet(fuzz, "bash", [
        "-c",
        `printf '{}' > "$1"/$'${base}-${tail}.json'`,
        "bash",
        fuzz.requests,
      ]);
      if (ok) {
        fuzz.unrepresentable.push({
          name: `${base}-${tail}.json`,
          at: Date.now(),
        });
      }
      return;
    }
  }
}

export async function dropper(fuzz: Fuzz): Promise<void> {
  while (!fuzz.stop) {
    if (fuzz.runId !== null) {
      try {
        await dropOne(fuzz);
      } catch (error) {
        fuzz.violations.add(
          "harness",
          `dropping a file: ${errorText(error)}`,
        );
      }
    }
    await sleep(fuzz.rng.int(5, 60));
  }
}
