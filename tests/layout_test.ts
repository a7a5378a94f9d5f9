/**
 * The shape of the code base is a claim the issues make: no file in lib/
 * over 400 lines, no import cycle, and the layering (shared ← packet,
 * verify, providers, render, control ← workspace ← status ← contract ←
 * runner ← commands ← main). These tests read the sources and fail when
 * the claim breaks.
 */

import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** Which lib areas each area may import (besides itself). */
const ALLOWED: Record<string, string[]> = {
  "lib/shared": [],
  "lib/packet": ["lib/shared"],
  "lib/verify": ["lib/shared", "lib/packet"],
  "lib/providers": ["lib/shared", "lib/packet"],
  "lib/render": ["lib/shared"],
  "lib/control": ["lib/shared"],
  "lib/workspace": ["lib/shared", "lib/packet", "lib/control"],
  // The state file and where runs stand: read by the contract and the runner.
  "lib/status": ["lib/shared", "lib/packet", "lib/verify", "lib/control"],
  "lib/contract": [
    "lib/shared",
    "lib/packet",
    "lib/control",
    "lib/workspace",
    "lib/status",
  ],
  "lib/runner": [
    "lib/shared",
    "lib/packet",
    "lib/verify",
    "lib/providers",
    "lib/render",
    "lib/control",
    "lib/workspace",
    "lib/status",
    "lib/contract",
  ],
};

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, dir))) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await sources(path));
    else if (entry.isFile && entry.name.endsWith(".ts")) found.push(path);
  }
  return found;
}

/** Every relative module a source imports (static, re-export or dynamic). */
async function importsOf(file: string): Promise<string[]> {
  const text = await Deno.readTextFile(join(ROOT, file));
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)[^;]*?from\s+"([^"]+)"/gms),
    ...text.matchAll(/^\s*import\s+"([^"]+)"/gm),
    ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers
    .filter((s) => s.startsWith("."))
    .map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

function area(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "lib") return `lib/${parts[1]}`;
  return parts[0] === "commands" ? "commands" : file;
}

const files = [
  ...await sources("lib"),
  ...await sources("commands"),
  "main.ts",
  "mod.ts",
];

Deno.test("no file in lib/ is over 400 lines", async () => {
  const long: string[] = [];
  for (const file of files.filter((f) => f.startsWith("lib/"))) {
    const lines = (await Deno.readTextFile(join(ROOT, file))).split("\n")
      .length - 1;
    if (lines > 400) long.push(`${file}: ${lines} lines`);
  }
  assert.deepEqual(long, []);
});

Deno.test("lib areas import only the layers below them, and lib never imports commands/", async () => {
  const wrong: string[] = [];
  for (const file of files.filter((f) => f.startsWith("lib/"))) {
    const from = area(file);
    for (const target of await importsOf(file)) {
      const to = area(target);
      if (to === from) continue;
      if (!(ALLOWED[from] ?? []).includes(to)) {
        wrong.push(`${file} imports ${target}`);
      }
    }
  }
  for (const file of files.filter((f) => f.startsWith("commands/"))) {
    // The dashboard is a client of the public API (issue 12): mod.ts only.
    const client = file === "commands/serve.ts" ||
      file.startsWith("commands/serve/");
    for (const target of await importsOf(file)) {
      if (target === "main.ts" || (target === "mod.ts" && !client)) {
        wrong.push(`${file} imports ${target}`);
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("every lib area has a mod.ts and a row in the layering table", async () => {
  const areas: string[] = [];
  for await (const entry of Deno.readDir(join(ROOT, "lib"))) {
    if (entry.isDirectory) areas.push(`lib/${entry.name}`);
  }
  assert.deepEqual(areas.sort(), Object.keys(ALLOWED).sort());
  for (const dir of areas) {
    assert.ok(files.includes(`${dir}/mod.ts`), `${dir} has no mod.ts`);
  }
});

Deno.test("the runner builds no control plane: only its mod.ts passes the file plane in", async () => {
  const builders: string[] = [];
  for (const file of files.filter((f) => f.startsWith("lib/runner/"))) {
    if ((await importsOf(file)).includes("lib/control/plane.ts")) {
      builders.push(file);
    }
  }
  assert.deepEqual(builders, ["lib/runner/mod.ts"]);
});

Deno.test("the contract and status work live in their own areas, not in lib/runner/", () => {
  const strays = files.filter((f) =>
    f.startsWith("lib/runner/") &&
    /(amend|contract|status|state_file|hold_prompt)/.test(f)
  );
  assert.deepEqual(strays, []);
  for (
    const name of [
      "lib/contract/enforced_contract.ts",
      "lib/contract/amend_contract.ts",
      "lib/contract/record_amendment.ts",
      "lib/status/status_rollup.ts",
      "lib/status/gather_status.ts",
      "lib/status/status_of.ts",
    ]
  ) assert.ok(files.includes(name), name);
});

/**
 * One meaning per name (issue 20): names retired from lib/ and mod.ts, each
 * with the name that now holds the meaning it was confused with. "lane" is
 * the steer lane, "current" the current run (and `--from current`), "log"
 * the audit log.
 */
const RETIRED: [RegExp, string][] = [
  [/\bRunState\b/, "StateFile (state.json)"],
  [/\bSteerDelivery\b/, "SteerLane"],
  [/\bcurrentContract\b|\bCurrentContract/, "promptContract"],
  [/\bcurrent_diffs?\b|\bCurrentDiffs?\b/, "worktree_diffs"],
  [/\blogFileSink\b/, "transcriptSink"],
  [/^\s*current: (string \| null|\{ prompt)/m, "inFlight, promptInFlight"],
  [/\bscript\.lane\b(?!\s*\?\?)/, "SimulatedScript.steerInput"],
  [/^\s*lane: (?!record\.provider)/m, "provider (an intervention's)"],
];

Deno.test("one meaning per name: lib/ and mod.ts use none of the retired names", async () => {
  const found: string[] = [];
  for (
    const file of files.filter((f) => f.startsWith("lib/") || f === "mod.ts")
  ) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const [pattern, instead] of RETIRED) {
      if (pattern.test(text)) {
        found.push(`${file}: ${pattern} (use ${instead})`);
      }
    }
  }
  assert.deepEqual(found, []);
});

Deno.test("every doc example in lib/ and mod.ts runs under deno test --doc (none is ignore)", async () => {
  const ignored: string[] = [];
  for (
    const file of files.filter((f) => f.startsWith("lib/") || f === "mod.ts")
  ) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const match of text.matchAll(/```(?:ts|typescript|js)\b([^\n]*)/g)) {
      if (/\b(ignore|no-run|no-eval)\b/.test(match[1]!)) {
        ignored.push(`${file}: ${match[0]}`);
      }
    }
  }
  assert.deepEqual(ignored, []);
});

Deno.test("no import cycle among lib/, commands/, main.ts and mod.ts", async () => {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    graph.set(file, (await importsOf(file)).filter((t) => t.endsWith(".ts")));
  }
  const state = new Map<string, "open" | "done">();
  const cycles: string[] = [];
  const walk = (file: string, path: string[]): void => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      cycles.push([...path.slice(path.indexOf(file)), file].join(" → "));
      return;
    }
    state.set(file, "open");
    for (const next of graph.get(file) ?? []) walk(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of files) walk(file, []);
  assert.deepEqual(cycles, []);
});

Deno.test("the import scanner finds static, re-exported and dynamic imports", async () => {
  // The regular expressions are the whole check: prove they match.
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "a.ts"),
      'import { b } from "./b.ts";\nexport const a = await import("./c.ts");\n',
    );
    const text = await Deno.readTextFile(join(dir, "a.ts"));
    const found = [
      ...text.matchAll(/^\s*(?:import|export)[^;]*?from\s+"([^"]+)"/gms),
      ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
    ].map((m) => m[1]);
    assert.deepEqual(found.sort(), ["./b.ts", "./c.ts"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
