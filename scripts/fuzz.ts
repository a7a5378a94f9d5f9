#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1
/**
 * Fuzzing the control directory: while simulated runs stream, drops every
 * kind of bad request file into `control/requests/` (random bytes, empty,
 * huge, deeply nested, wrong types, other runs' requests, names near the
 * 255-byte limit or colliding after sanitising or without `.json`, links
 * into a canary directory, directories with links inside, FIFOs; written
 * through a dot-temp file and a rename, or directly), and plants links at
 * the runner's own paths (`control/log.jsonl`, `control/outcomes`,
 * `control/snapshot.json`, `interventions/<p>.jsonl`, `logs/<run>/…`)
 * pointing into the canary directory. Then checks that every run ended
 * `completed` with exit 0, that the canary directory is byte for byte
 * unchanged (nothing written outside the state root), that every request
 * file got a receipt and a final log entry with a reason and was removed,
 * and that every planted link was moved aside and logged, never followed.
 * Then fuzzes the dashboard as `scripts/fuzz_dashboard.ts` says. Prints a
 * summary of each; exits 1 on any violation.
 *
 *   deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid --allow-net=127.0.0.1 \
 *     scripts/fuzz.ts [--quick] [--seconds N] [--seed N] [--keep]
 *
 * Two minutes each by default; `--quick` is about 15 and 35 seconds.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { defaultStateRoot } from "../lib/workspace/mod.ts";
import { join, relative } from "node:path";
import { receiptFileName, requestIdOf } from "../lib/control/paths.ts";
import { makeRepo } from "./_harness/repo.ts";
import {
  formatCount,
  leftoverProcesses,
  LineReader,
  parseScriptFlags,
  readAll,
  Rng,
  sleep,
  spawnCli,
  Violations,
} from "./_harness/mod.ts";
import { fuzzDashboard } from "./fuzz_dashboard.ts";

const PROMPTS = [
  { id: "01", lane: "resume" },
  { id: "02", lane: "stdin" },
  { id: "03", lane: "resume" },
] as const;
const MAX_REQUEST_BYTES = 64 * 1024;
const NAME_MAX = 255;

// ---------------------------------------------------------------------------
// The canary: a directory outside the state root that links point into

/** One entry of a directory tree, as compared before and after. */
export interface TreeEntry {
  /** `file`, `dir`, `link` or `other`. */
  kind: string;
  /** Permission bits. */
  mode: number | null;
  /** Modification time (ms). */
  mtime: number | null;
  /** A file's content digest, a link's target. */
  content: string | null;
}

async function digest(bytes: Uint8Array): Promise<string> {
  const hash = await crypto.subtle.digest(
    "SHA-256",
    bytes as Uint8Array<ArrayBuffer>,
  );
  return Array.from(
    new Uint8Array(hash),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

/** Records a directory tree without following links: every entry's kind, mode, mtime and content. */
export async function snapshotTree(
  dir: string,
): Promise<Map<string, TreeEntry>> {
  const tree = new Map<string, TreeEntry>();
  const walk = async (path: string): Promise<void> => {
    const info = await Deno.lstat(path);
    const rel = relative(dir, path) || ".";
    const base = { mode: info.mode, mtime: info.mtime?.getTime() ?? null };
    if (info.isSymlink) {
      tree.set(rel, {
        kind: "link",
        ...base,
        content: await Deno.readLink(path),
      });
    } else if (info.isFile) {
      tree.set(rel, {
        kind: "file",
        ...base,
        content: await digest(await Deno.readFile(path)),
      });
    } else if (info.isDirectory) {
      tree.set(rel, { kind: "dir", ...base, content: null });
      for await (const entry of Deno.readDir(path)) {
        await walk(join(path, entry.name));
      }
    } else {
      tree.set(rel, { kind: "other", ...base, content: null });
    }
  };
  await walk(dir);
  return tree;
}

/** Every difference between two snapshots of a tree. */
export function compareTrees(
  before: ReadonlyMap<string, TreeEntry>,
  after: ReadonlyMap<string, TreeEntry>,
): string[] {
  const problems: string[] = [];
  for (const [path, old] of before) {
    const now = after.get(path);
    if (now === undefined) {
      problems.push(`${path}: removed`);
      continue;
    }
    for (const key of ["kind", "mode", "mtime", "content"] as const) {
      // A directory's mtime is its listing's: a new or removed entry shows below.
      if (key === "mtime" && old.kind === "dir") continue;
      if (old[key] !== now[key]) {
        problems.push(`${path}: ${key} changed (${old[key]} → ${now[key]})`);
      }
    }
  }
  for (const path of after.keys()) {
    if (!before.has(path)) problems.push(`${path}: new`);
  }
  return problems;
}

async function makeCanary(dir: string): Promise<void> {
  await Deno.mkdir(join(dir, "dir", "sub"), { recursive: true });
  await Deno.mkdir(join(dir, "empty"));
  await Deno.writeTextFile(join(dir, "secret.txt"), "canary: do not touch\n");
  await Deno.writeTextFile(join(dir, "dir", "inner.txt"), "inner canary\n");
  await Deno.writeTextFile(join(dir, "dir", "sub", "deep.json"), "{}\n");
  await Deno.writeTextFile(join(dir, "log.jsonl"), "");
  await Deno.writeTextFile(join(dir, "hardlink-target.txt"), "hard canary\n");
}

// ---------------------------------------------------------------------------
// The packet

async function writeFuzzPacket(dir: string): Promise<string> {
  const packet = join(dir, "packet");
  await makeRepo(join(packet, "workspace"));
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    [
      "---",
      "name: fuzz",
      "provider: simulated",
      "repos:",
      "  app: {path: workspace, default: true}",
      "recovery:",
      "  max_steers: 3",
      "  retry: {base_delay_ms: 0, max_delay_ms: 0}",
      "---",
      "",
    ].join("\n"),
  );
  for (const { id, lane } of PROMPTS) {
    await Deno.writeTextFile(
      join(packet, "prompts", `${id}_stream.prompt.md`),
      [
        "---",
        `id: "${id}"`,
        `name: Stream ${id}`,
        "verify:",
        `  files_exist: [out_${id}.md]`,
        "simulate:",
        `  lane: ${lane}`,
        "  attempts:",
        `    - {delay_ms: 40, repeat: 16, thinking: ["hm"], messages: ["working"], ` +
        `tools: [{name: Bash, input: {command: ls}, output: "a.md"}], ` +
        `writes: [{path: out_${id}.md, text: "done\\n"}], usage: {input_tokens: 10, output_tokens: 1}}`,
        "---",
        `Fuzz prompt ${id}.`,
        "",
      ].join("\n"),
    );
  }
  return packet;
}

// ---------------------------------------------------------------------------
// Request files

/** A request file the fuzzer made. */
export interface Dropped {
  /** Its name in `requests/`. */
  name: string;
  /** What it is. */
  kind: string;
}

interface Fuzz {
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
  unrepresentable: string[];
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

function validRequest(fuzz: Fuzz, runId: string): Record<string, unknown> {
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

function deepJson(fuzz: Fuzz): string {
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

function wrongTypes(fuzz: Fuzz): string {
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

function hugeJson(fuzz: Fuzz): string {
  const size = fuzz.rng.chance(0.2)
    ? MAX_REQUEST_BYTES + fuzz.rng.int(1, 2)
    : MAX_REQUEST_BYTES + fuzz.rng.int(1, 200 * 1024);
  const base = JSON.stringify(validRequest(fuzz, fuzz.runId ?? "none"));
  return fuzz.rng.chance(0.5)
    ? base + " ".repeat(Math.max(0, size - base.length))
    : "x".repeat(size);
}

/** A name of exactly `bytes` UTF-8 bytes, ending in `.json`, mixing one- and two-byte characters. */
function nameOfBytes(prefix: string, bytes: number, rng: Rng): string {
  const encoder = new TextEncoder();
  let name = prefix;
  while (encoder.encode(name).length < bytes - 5) {
    const left = bytes - 5 - encoder.encode(name).length;
    name += left >= 2 && rng.chance(0.4) ? "é" : "a";
  }
  return name + ".json";
}

/** Writes content at `requests/name`: through a dot-temp file and a rename, or directly, in pieces. */
async function writeRequestFile(
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
    fuzz.dropped.push({ name, kind });
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
      if (ok) fuzz.unrepresentable.push(`${base}-${tail}.json`);
      return;
    }
  }
}

async function dropper(fuzz: Fuzz): Promise<void> {
  while (!fuzz.stop) {
    if (fuzz.runId !== null) {
      try {
        await dropOne(fuzz);
      } catch (error) {
        fuzz.violations.add(
          "harness",
          `dropping a file: ${(error as Error).message}`,
        );
      }
    }
    await sleep(fuzz.rng.int(5, 60));
  }
}

// ---------------------------------------------------------------------------
// Links at the runner's own paths

async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function holdsLink(dir: string): Promise<boolean> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isSymlink) return true;
  }
  return false;
}

/**
 * Plants a link at `path` (moving what is there to `saved/`), unless a
 * planted one is still there: a symbolic link, or with `hard` a hard link
 * to a canary file.
 */
async function plant(
  fuzz: Fuzz,
  path: string,
  target: string,
  hard = false,
): Promise<void> {
  // Never through a link planted earlier: that would write into the canary.
  let parent = fuzz.stateRoot;
  for (const part of relative(fuzz.stateRoot, path).split("/").slice(0, -1)) {
    parent = join(parent, part);
    const info = await lstatOrNull(parent);
    if (info === null || !info.isDirectory) return;
  }
  for (let tries = 0; tries < 5; tries++) {
    const info = await lstatOrNull(path);
    if (info?.isSymlink) return; // The last one is still waiting for the runner.
    if (info?.isFile && (info.nlink ?? 1) > 1) return; // So is a hard one.
    if (info?.isDirectory && await holdsLink(path)) {
      return; // Moving it would move a planted link the runner has not reached.
    }
    if (info !== null) {
      const aside = join(
        fuzz.saved,
        `${++fuzz.savedSeq}-${path.split("/").pop()}`,
      );
      try {
        await Deno.rename(path, aside);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        throw error;
      }
    }
    try {
      if (hard) {
        await Deno.link(target, path);
        fuzz.hardPlants.push({ path: relative(fuzz.stateRoot, path), target });
        return;
      }
      await Deno.symlink(target, path);
      fuzz.plants.push({ path: relative(fuzz.stateRoot, path), target });
      return;
    } catch (error) {
      // The runner made the file again in between: move that one too.
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        if (error instanceof Deno.errors.NotFound) return; // Its directory is not there yet.
        throw error;
      }
    }
  }
}

async function planter(fuzz: Fuzz): Promise<void> {
  const rng = fuzz.rng;
  while (!fuzz.stop) {
    await sleep(rng.int(200, 1200));
    const runId = fuzz.runId;
    if (runId === null || fuzz.stop) continue;
    const root = fuzz.stateRoot;
    const n = fuzz.plants.length;
    const fileTarget = rng.pick([
      join(fuzz.canary, "secret.txt"),
      join(fuzz.canary, "log.jsonl"),
      join(fuzz.canary, `missing-plant-${n}`),
      join(fuzz.canary, "dir"),
    ]);
    const dirTarget = rng.pick([
      join(fuzz.canary, "dir"),
      join(fuzz.canary, "empty"),
      join(fuzz.canary, `missing-plant-dir-${n}`),
    ]);
    const prompt = rng.pick(PROMPTS).id;
    const choices: [string, string][] = [
      [join(root, "control", "log.jsonl"), fileTarget],
      [join(root, "control", "outcomes"), dirTarget],
      [join(root, "control", "snapshot.json"), fileTarget],
      [join(root, "interventions", `${prompt}.jsonl`), fileTarget],
      [join(root, "logs", runId, `${prompt}-attempt-1.log`), fileTarget],
      [join(root, "logs", runId), dirTarget],
    ];
    if (rng.chance(0.15)) {
      // A hard link is no symbolic link: only the canary can tell whether the
      // runner writes through it.
      const [path] = rng.pick([choices[0]!, choices[3]!]);
      try {
        await plant(fuzz, path, join(fuzz.canary, "hardlink-target.txt"), true);
      } catch (error) {
        fuzz.violations.add(
          "harness",
          `planting a hard link at ${path}: ${(error as Error).message}`,
        );
      }
      continue;
    }
    const [path, target] = rng.pick(choices);
    try {
      await plant(fuzz, path, target);
    } catch (error) {
      fuzz.violations.add(
        "harness",
        `planting ${path}: ${(error as Error).message}`,
      );
    }
  }
}

// ---------------------------------------------------------------------------
// Runs

interface RunOutcome {
  runId: string | null;
  code: number;
  signal: Deno.Signal | null;
  last: Record<string, unknown> | null;
  stderr: string;
}

async function runOnce(fuzz: Fuzz): Promise<RunOutcome> {
  const child = spawnCli(["run", fuzz.packet, "--json"]);
  fuzz.live.add(child);
  const stderr = readAll(child.stderr);
  const lines = new LineReader(child.stdout);
  let last: Record<string, unknown> | null = null;
  let runId: string | null = null;
  for (
    let line = await lines.next();
    line !== null;
    line = await lines.next()
  ) {
    try {
      last = JSON.parse(line);
    } catch {
      fuzz.violations.add(
        "runner output",
        `not JSON on stdout: ${line.slice(0, 200)}`,
      );
      continue;
    }
    if (runId === null && typeof last?.run_id === "string") {
      runId = last.run_id;
      fuzz.runId = runId;
    }
  }
  const status = await child.status;
  fuzz.live.delete(child);
  fuzz.previousRunId = runId;
  return {
    runId,
    code: status.code,
    signal: status.signal,
    last,
    stderr: await stderr,
  };
}

// ---------------------------------------------------------------------------
// Checks

async function listNames(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

function parseLines(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    try {
      const value = JSON.parse(line);
      if (typeof value === "object" && value !== null) out.push(value);
    } catch {
      // Torn or empty.
    }
  }
  return out;
}

/** A receipt, and whether the fuzzer moved it (with its directory) to plant a link. */
export interface FoundReceipt {
  /** The receipt. */
  receipt: Record<string, unknown>;
  /** Found in a copy of `outcomes/` the fuzzer moved aside. */
  moved: boolean;
}

/** Every log entry and receipt found, receipts by file name. */
export interface Records {
  /** Log entries, from the log and the copies moved aside. */
  log: Record<string, unknown>[];
  /** Receipts by file name, from `outcomes/` and the copies moved aside. */
  receipts: Map<string, FoundReceipt[]>;
}

/**
 * Every log entry and receipt the state root holds, including those in
 * copies the fuzzer moved aside (to `saved/`) to plant links.
 */
export async function collectRecords(
  stateRoot: string,
  saved: string,
): Promise<Records> {
  const log: Record<string, unknown>[] = [];
  const receipts = new Map<string, FoundReceipt[]>();
  const addReceipts = async (dir: string, moved: boolean): Promise<void> => {
    for (const name of await listNames(dir)) {
      const path = join(dir, name);
      const info = await Deno.lstat(path);
      if (!info.isFile) continue;
      try {
        const receipt = JSON.parse(await Deno.readTextFile(path));
        receipts.set(name, [...(receipts.get(name) ?? []), { receipt, moved }]);
      } catch {
        // Not a receipt: reported by the request check when one is missing.
      }
    }
  };
  const addLog = async (path: string): Promise<void> => {
    const info = await lstatOrNull(path);
    if (info === null || !info.isFile) return;
    log.push(...parseLines(await Deno.readTextFile(path)));
  };
  await addLog(join(stateRoot, "control", "log.jsonl"));
  await addReceipts(join(stateRoot, "control", "outcomes"), false);
  for (const name of await listNames(saved)) {
    if (name.endsWith("-log.jsonl")) await addLog(join(saved, name));
    if (name.endsWith("-outcomes")) await addReceipts(join(saved, name), true);
  }
  return { log, receipts };
}

/** What the request check counted. */
export interface RequestCheck {
  /** Files checked. */
  checked: number;
  /** Final outcomes, by outcome. */
  outcomes: Record<string, number>;
  /**
   * Requests decided again after the fuzzer moved `outcomes/` (and their
   * receipt) away before their log entry was written.
   */
  redecided: number;
}

/**
 * Every dropped file got exactly one receipt (named as the product names
 * it) for its request id, a final log entry for it (a rejection with a
 * reason), and is gone from `requests/`.
 */
export async function checkDropped(
  requests: string,
  dropped: readonly Dropped[],
  records: Records,
  violations: Violations,
): Promise<RequestCheck> {
  const finals = new Map<string, Record<string, unknown>[]>();
  for (const entry of records.log) {
    if (
      typeof entry.request_id === "string" &&
      (entry.outcome === "applied" || entry.outcome === "rejected")
    ) {
      finals.set(entry.request_id, [
        ...(finals.get(entry.request_id) ?? []),
        entry,
      ]);
    }
  }
  const filesPerId = new Map<string, number>();
  for (const { name } of dropped) {
    const id = requestIdOf(name);
    filesPerId.set(id, (filesPerId.get(id) ?? 0) + 1);
  }
  const left = new Set(await listNames(requests));
  const result: RequestCheck = { checked: 0, outcomes: {}, redecided: 0 };
  for (const { name, kind } of dropped) {
    result.checked++;
    const id = requestIdOf(name);
    const tag = `${kind} ${
      JSON.stringify(name.length > 60 ? name.slice(0, 40) + "…" : name)
    }`;
    const receipts = records.receipts.get(await receiptFileName(name)) ?? [];
    // A receipt the fuzzer moved away before the log entry was written is
    // not there for the runner any more: it decides the request again.
    const redecided = receipts.length > 1 &&
      receipts.filter((r) => !r.moved).length <= 1;
    if (redecided) result.redecided++;
    else if (receipts.length !== 1) {
      violations.add("one receipt", `${tag}: ${receipts.length} receipts`);
    }
    for (const { receipt } of receipts) {
      if (receipt.request_id !== id) {
        violations.add(
          "one receipt",
          `${tag}: the receipt names request ${
            JSON.stringify(receipt.request_id)
          }`,
        );
      }
    }
    const entries = finals.get(id) ?? [];
    const expected = filesPerId.get(id)!;
    const allowed = redecided ? expected + receipts.length - 1 : expected;
    if (entries.length < expected || entries.length > allowed) {
      violations.add(
        "one final log entry",
        `${tag}: ${entries.length} final log entries for ${expected} file(s) with request id ${
          JSON.stringify(id.slice(0, 60))
        }`,
      );
    }
    for (const entry of entries) {
      const outcome = String(entry.outcome);
      result.outcomes[outcome] = (result.outcomes[outcome] ?? 0) + 1;
      if (
        outcome === "rejected" &&
        (typeof entry.reason !== "string" || entry.reason.trim() === "")
      ) {
        violations.add(
          "rejection has a reason",
          `${tag}: rejected without a reason`,
        );
      }
    }
    if (left.has(name)) {
      violations.add("requests removed", `${tag}: still in requests/`);
    }
  }
  return result;
}

/** What the link check counted. */
export interface LinkCheck {
  /** Planted links moved aside (with their log entry). */
  movedAside: number;
  /** Planted links replaced by the runner's own file (an atomic rename over them). */
  replaced: number;
  /** Planted links still in place at the end (the runner never went there). */
  untouched: number;
}

/**
 * Every link the runner moved aside (`NAME.link-refused-TIME`) has its
 * `link_refused` log entry; every planted link (symbolic, or `hard`) is
 * accounted for (moved aside, replaced by an atomic rename, or never
 * reached).
 */
export async function checkLinks(
  stateRoot: string,
  plants: readonly { path: string; target: string; hard?: boolean }[],
  log: readonly Record<string, unknown>[],
  violations: Violations,
): Promise<LinkCheck> {
  const logged = new Set<string>();
  for (const entry of log) {
    if (entry.command !== "link_refused") continue;
    const params = entry.params as Record<string, unknown>;
    logged.add(String(params?.moved_to));
    if (typeof entry.reason !== "string" || entry.reason === "") {
      violations.add(
        "links moved aside",
        `link_refused without a reason: ${JSON.stringify(params)}`,
      );
    }
  }
  const result: LinkCheck = { movedAside: 0, replaced: 0, untouched: 0 };
  const byPath = new Map<string, number>();
  for (const { path } of plants) byPath.set(path, (byPath.get(path) ?? 0) + 1);
  for (const [path, planted] of byPath) {
    const dir = join(stateRoot, path, "..");
    const base = path.split("/").pop()!;
    const aside = (await listNames(dir)).filter((name) =>
      name.startsWith(`${base}.link-refused-`)
    );
    for (const name of aside) {
      const rel = relative(stateRoot, join(dir, name));
      if (!logged.has(rel)) {
        violations.add(
          "links moved aside",
          `${rel}: moved aside, but no link_refused log entry names it`,
        );
      }
    }
    const now = await lstatOrNull(join(stateRoot, path));
    const still = now?.isSymlink ||
        (now?.isFile && (now.nlink ?? 1) > 1 &&
          plants.some((p) => p.path === path && p.hard))
      ? 1
      : 0;
    // A link put there in the instant before a rename is replaced
    // unfollowed, and reported as replaced (the runner cannot see it first).
    const reported = log.filter((entry) =>
      entry.command === "link_refused" &&
      (entry.params as Record<string, unknown>)?.path === path &&
      (entry.params as Record<string, unknown>)?.kind === "replaced"
    ).length;
    const replaced = Math.max(0, planted - aside.length - still - reported);
    if (planted - aside.length - still < 0) {
      violations.add(
        "links moved aside",
        `${path}: ${aside.length} moved aside, but ${planted} planted`,
      );
    }
    if (replaced > 0) {
      // Not followed, but not refused either: the design asks for a logged refusal.
      violations.add(
        "links moved aside",
        `${path}: ${replaced} of ${planted} planted links were replaced by the runner's own file, without a link_refused entry`,
      );
    }
    result.movedAside += aside.length;
    result.untouched += still;
    result.replaced += Math.max(0, replaced);
  }
  return result;
}

/** A name written with `\xNN` escapes, as Deno reads it back: invalid UTF-8 becomes U+FFFD. */
export function lossyName(escaped: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < escaped.length; i++) {
    if (escaped.startsWith("\\x", i)) {
      bytes.push(parseInt(escaped.slice(i + 2, i + 4), 16));
      i += 3;
    } else bytes.push(...new TextEncoder().encode(escaped[i]!));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}

/**
 * A file whose name is not UTF-8 cannot be read or removed through Deno:
 * each must have a logged rejection saying so, naming the file as Deno
 * reads it.
 *
 * @returns How many have none.
 */
export function checkUnrepresentable(
  names: readonly string[],
  log: readonly Record<string, unknown>[],
  violations: Violations,
): number {
  const explained = new Set<string>();
  for (const entry of log) {
    if (!/not valid UTF-8/.test(String(entry.reason))) continue;
    explained.add(String((entry.params as Record<string, unknown>)?.file));
  }
  let missing = 0;
  for (const name of names) {
    if (explained.has(lossyName(name))) continue;
    missing++;
    violations.add(
      "unrepresentable names explained",
      `${name}: no rejection names ${JSON.stringify(lossyName(name))}`,
    );
  }
  return missing;
}

/** No dot-temp (`.*.tmp`) or claimed file left in the state root. */
async function checkTemps(
  stateRoot: string,
  violations: Violations,
): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (/^\..*\.(tmp|claimed)$/.test(entry.name)) {
        violations.add("no temp files", relative(stateRoot, path));
      }
      if (entry.isDirectory) await walk(path);
    }
  };
  await walk(stateRoot);
}

// ---------------------------------------------------------------------------

async function main(): Promise<number> {
  const flags = parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 15 });
  const dir = await Deno.makeTempDir({ prefix: "prompt_runner_fuzz_" });
  const live = new Set<Deno.ChildProcess>();
  const killAll = async (): Promise<void> => {
    for (const child of live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone.
      }
    }
    await Promise.allSettled([...live].map((c) => c.status));
  };
  const onSignal = (): void => {
    killAll().finally(async () => {
      if (!flags.keep) {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
      Deno.exit(130);
    });
  };
  Deno.addSignalListener("SIGINT", onSignal);
  const began = Date.now();
  try {
    const packet = await writeFuzzPacket(dir);
    const canary = join(dir, "canary");
    const saved = join(dir, "saved");
    await makeCanary(canary);
    await Deno.mkdir(saved);
    const stateRoot = defaultStateRoot(packet);
    const fuzz: Fuzz = {
      dir,
      packet,
      stateRoot,
      requests: join(stateRoot, "control", "requests"),
      canary,
      saved,
      rng: new Rng(flags.seed),
      violations: new Violations(),
      dropped: [],
      unmakeable: [],
      unrepresentable: [],
      byKind: new Map(),
      plants: [],
      hardPlants: [],
      runId: null,
      previousRunId: null,
      stop: false,
      seq: 0,
      savedSeq: 0,
      live,
    };
    const before = await snapshotTree(canary);
    const topBefore = await listNames(dir);
    console.error(`fuzz: ${flags.seconds} s, seed ${flags.seed}, in ${dir}`);
    const deadline = began + flags.seconds * 1000;
    const workers = [dropper(fuzz), dropper(fuzz), planter(fuzz)];
    const runs: RunOutcome[] = [];
    while (Date.now() < deadline) {
      const outcome = runOnce(fuzz);
      const stopAt = setTimeout(
        () => fuzz.stop = true,
        Math.max(0, deadline - Date.now()),
      );
      const done = await outcome;
      clearTimeout(stopAt);
      runs.push(done);
      fuzz.runId = null;
      if (done.code !== 0) break;
    }
    fuzz.stop = true;
    await Promise.all(workers);
    const v = fuzz.violations;
    for (const run of runs) {
      const status = (run.last?.data as Record<string, unknown> | undefined)
        ?.status;
      if (
        run.code !== 0 || run.last?.type !== "run_finished" ||
        status !== "completed"
      ) {
        v.add(
          "runner completes",
          `run ${run.runId} exited ${run.code}${
            run.signal ? ` (${run.signal})` : ""
          }, last event ${run.last?.type} ${status ?? ""}: ${
            run.stderr.trim().slice(0, 400)
          }`,
        );
      }
      for (const line of run.stderr.split("\n")) {
        if (line.trim() === "") continue;
        if (
          /^warning: control plane: .* was a (symbolic|hard) link/.test(line)
        ) {
          continue;
        }
        if (/^warning: .* was a link; it was moved aside/.test(line)) continue;
        // A link put at a file in the instant before the runner's rename over
        // it: replaced unfollowed, reported, and counted by checkLinks().
        if (
          /^warning: control plane: .* was moved away by someone else as the runner rewrote it/
            .test(line)
        ) continue;
        v.add("runner output", `run ${run.runId}: ${line.slice(0, 300)}`);
      }
    }
    for (const problem of compareTrees(before, await snapshotTree(canary))) {
      v.add("canary unchanged", problem);
    }
    const topAfter = await listNames(dir);
    if (JSON.stringify(topBefore) !== JSON.stringify(topAfter)) {
      v.add(
        "nothing written outside the state root",
        `the temporary directory now holds ${topAfter.join(", ")}`,
      );
    }
    const records = await collectRecords(stateRoot, saved);
    const requests = await checkDropped(
      fuzz.requests,
      fuzz.dropped,
      records,
      v,
    );
    const links = await checkLinks(
      stateRoot,
      [
        ...fuzz.plants,
        ...fuzz.hardPlants.map((plant) => ({ ...plant, hard: true })),
      ],
      records.log,
      v,
    );
    // A name that is not UTF-8 cannot be read or removed through Deno: its
    // rejection names the problem and it stays.
    const unexplained = checkUnrepresentable(
      fuzz.unrepresentable,
      records.log,
      v,
    );
    await checkTemps(stateRoot, v);
    for (const p of await leftoverProcesses(dir)) v.add("no process left", p);
    const elapsed = Math.round((Date.now() - began) / 1000);
    const kinds = [...fuzz.byKind].sort((a, b) => b[1] - a[1]).map(([k, n]) =>
      `${k} ${n}`
    ).join(", ");
    const hardPaths = new Map<string, number>();
    for (const { path } of fuzz.hardPlants) {
      hardPaths.set(path, (hardPaths.get(path) ?? 0) + 1);
    }
    const plantPaths = new Map<string, number>();
    for (const { path } of fuzz.plants) {
      const key = path.replace(/^logs\/[^/]+/, "logs/<run>");
      plantPaths.set(key, (plantPaths.get(key) ?? 0) + 1);
    }
    console.log(
      `fuzz: ${elapsed} s, ${runs.length} runs, ${
        formatCount(fuzz.dropped.length)
      } request files dropped, ${
        fuzz.plants.length + fuzz.hardPlants.length
      } links planted, violations: ${formatCount(v.count)}`,
    );
    console.log(`  files by kind: ${kinds}`);
    console.log(
      `  outcomes: ${
        Object.entries(requests.outcomes).map(([k, n]) => `${k} ${n}`).join(
          ", ",
        )
      }; ${requests.checked} files checked; ${requests.redecided} decided again after the fuzzer moved their receipt away`,
    );
    console.log(
      `  links planted: ${
        [...plantPaths].map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      }; moved aside and logged ${links.movedAside}, replaced by an atomic rename ${links.replaced}, never reached ${links.untouched}; hard links: ${
        [...hardPaths].map(([k, n]) => `${k} ${n}`).join(", ") || "none"
      }`,
    );
    console.log(
      `  names not representable: ${fuzz.unrepresentable.length} not UTF-8 (left in requests/, ${
        fuzz.unrepresentable.length - unexplained
      } with a logged rejection naming them as Deno reads them), ${fuzz.unmakeable.length} longer than ${NAME_MAX} bytes (refused by the file system); seed ${flags.seed}`,
    );
    if (v.count > 0) {
      console.log("violations:");
      for (const line of v.report()) console.log(line);
      return 1;
    }
    return 0;
  } finally {
    await killAll();
    Deno.removeSignalListener("SIGINT", onSignal);
    if (flags.keep) console.error(`fuzz: kept ${dir}`);
    else await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  const control = await main();
  const dashboard = await fuzzDashboard(
    parseScriptFlags(Deno.args, { seconds: 120, quickSeconds: 15 }),
  );
  Deno.exit(Math.max(control, dashboard));
}
