/**
 * The dashboard is a client like any other (issue 12): `commands/serve.ts`
 * and every file in `commands/serve/` import only `mod.ts`, each other,
 * `node:` built-ins, (`serve.ts` only) the CLI's plumbing, and (two named
 * files only) the control commands' confinement (issue 19). Never `lib/`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../_helpers/run_cli.ts";

/** The CLI plumbing `commands/serve.ts` may use. */
const PLUMBING = [
  "./_args.ts",
  "./_context.ts",
  "./_fleet_flags.ts",
  "./_help.ts",
  "./_output.ts",
];

/**
 * The confinement plumbing two dashboard files may use, and nothing else
 * of the CLI (issue 19): a web action must run in a worker confined to its
 * run exactly as a control command is, so the dashboard starts it (and the
 * worker answers) through the control commands' own code, not a copy.
 * That code is the CLI's, not the library's: it needs the runtime's
 * `--unstable-worker-options` and worker entry modules, which `mod.ts`, a
 * library anyone imports, has no business exposing.
 */
const CONFINEMENT: Readonly<Record<string, readonly string[]>> = {
  "commands/serve/_actions.ts": ["../control/_confined.ts"],
  "commands/serve/_action_worker.ts": ["../control/_worker.ts"],
};

/**
 * The page code (`commands/serve/page/`, built into the browser's script)
 * imports its own files only, and the one duration format for people: the
 * code base writes a duration one way (issue 20), on the page too, and that
 * plain function is all of `lib/` a page may be built from.
 */
const PAGE_LIB: Readonly<Record<string, readonly string[]>> = {
  "commands/serve/page/shared.ts": [
    "../../../lib/render/duration.ts",
    // Spend against a budget is written one way too (status, watch, page).
    "../../../lib/status/attention_text.ts",
  ],
};

/** The import and export specifiers of a module's text (static and dynamic). */
function importSpecifiers(text: string): string[] {
  // Comments could name a path that is not imported.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(
    /(^|[^:"'`])\/\/.*$/gm,
    "$1",
  );
  const found: string[] = [];
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?[^"'`;]*?\sfrom\s*["']([^"']+)["']/g,
    /\bimport\s*["']([^"']+)["']/g,
    /\bimport\s*\(\s*["'`]([^"'`]+)["'`]/g,
  ];
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) found.push(match[1]!);
  }
  return found;
}

/** Why a specifier breaks the rule, or `null` when it keeps it. */
function breach(file: string, specifier: string): string | null {
  if (file.startsWith("commands/serve/page/")) {
    return /^\.\/[A-Za-z0-9_]+\.ts$/.test(specifier) ||
        (PAGE_LIB[file] ?? []).includes(specifier)
      ? null
      : `${file} imports "${specifier}"`;
  }
  if (specifier.startsWith("node:")) return null;
  const inServe = file.startsWith("commands/serve/");
  const allowed = inServe
    ? specifier === "../../mod.ts" ||
      /^\.\/(page\/)?[A-Za-z0-9_]+\.ts$/.test(specifier) ||
      (CONFINEMENT[file] ?? []).includes(specifier)
    : specifier === "../mod.ts" || PLUMBING.includes(specifier) ||
      /^\.\/serve\/[A-Za-z0-9_]+\.ts$/.test(specifier);
  return allowed ? null : `${file} imports "${specifier}"`;
}

/** Every breach of the rule in the dashboard's files. */
async function breaches(): Promise<string[]> {
  const files = ["commands/serve.ts"];
  for (const dir of ["commands/serve", "commands/serve/page"]) {
    for await (const entry of Deno.readDir(join(ROOT, dir))) {
      if (entry.isFile && entry.name.endsWith(".ts")) {
        files.push(`${dir}/${entry.name}`);
      }
    }
  }
  const found: string[] = [];
  for (const file of files.sort()) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const specifier of importSpecifiers(text)) {
      const why = breach(file, specifier);
      if (why !== null) found.push(why);
    }
  }
  return found;
}

Deno.test("the dashboard imports only mod.ts, its own files, node: built-ins and the CLI plumbing", async () => {
  assert.deepEqual(await breaches(), []);
  // The scan reads the files it judges.
  const own = importSpecifiers(
    await Deno.readTextFile(join(ROOT, "commands", "serve.ts")),
  );
  assert.ok(own.includes("./serve/_server.ts"), own.join(", "));
});

Deno.test("the import rule names the file and the specifier that break it", () => {
  const text = `
import { readState } from "../../lib/runner/state_file.ts";
import type { Snapshot } from "../../mod.ts";
export { x } from "../../lib/control/mod.ts";
import "../../lib/shared/side_effect.ts";
const later = await import("../../lib/render/mod.ts");
// import { no } from "../../lib/in_a_comment.ts";
import { parse } from "npm:yaml";
import { join } from "node:path";
import { ok } from "./_runs.ts";
`;
  const found = importSpecifiers(text).map((s) =>
    breach("commands/serve/_x.ts", s)
  ).filter((why) => why !== null);
  assert.deepEqual(
    [...found].sort(),
    [
      'commands/serve/_x.ts imports "../../lib/runner/state_file.ts"',
      'commands/serve/_x.ts imports "../../lib/control/mod.ts"',
      'commands/serve/_x.ts imports "../../lib/shared/side_effect.ts"',
      'commands/serve/_x.ts imports "../../lib/render/mod.ts"',
      'commands/serve/_x.ts imports "npm:yaml"',
    ].sort(),
  );
  // The page code: its own files and the one duration format, no more.
  assert.equal(breach("commands/serve/page/run_page.ts", "./dom.ts"), null);
  assert.equal(
    breach("commands/serve/page/shared.ts", "../../../lib/render/duration.ts"),
    null,
  );
  assert.equal(
    breach(
      "commands/serve/page/run_page.ts",
      "../../../lib/render/duration.ts",
    ),
    'commands/serve/page/run_page.ts imports "../../../lib/render/duration.ts"',
  );
  assert.equal(
    breach("commands/serve/page/shared.ts", "../../../mod.ts"),
    'commands/serve/page/shared.ts imports "../../../mod.ts"',
  );
  // serve.ts may use the CLI plumbing; its files may not.
  assert.equal(breach("commands/serve.ts", "./_args.ts"), null);
  assert.equal(
    breach("commands/serve/_server.ts", "../_args.ts"),
    'commands/serve/_server.ts imports "../_args.ts"',
  );
  assert.equal(
    breach("commands/serve.ts", "./control/_signals.ts"),
    'commands/serve.ts imports "./control/_signals.ts"',
  );
  // The confinement plumbing, only where it is named.
  assert.equal(
    breach("commands/serve/_actions.ts", "../control/_confined.ts"),
    null,
  );
  assert.equal(
    breach("commands/serve/_server.ts", "../control/_confined.ts"),
    'commands/serve/_server.ts imports "../control/_confined.ts"',
  );
  assert.equal(
    breach("commands/serve/_actions.ts", "../control/_scope.ts"),
    'commands/serve/_actions.ts imports "../control/_scope.ts"',
  );
});
