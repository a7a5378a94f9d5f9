/**
 * `deno task gen` and its check: the embedded page code is what the page
 * sources build to, and the check fails when a page source changes without
 * regenerating (then passes again once regenerated).
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { buildPage, EMBEDDED, GENERATED } from "../../../scripts/gen/page.ts";
import { ROOT } from "../../_helpers/run_cli.ts";

const SCRIPT = join(ROOT, "scripts", "gen", "page.ts");

async function gen(root: string, check: boolean): Promise<{
  code: number;
  stderr: string;
}> {
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      `--allow-write=${join(root, EMBEDDED)}`,
      "--allow-run",
      SCRIPT,
      ...(check ? ["--check"] : []),
      "--root",
      root,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code, stderr: new TextDecoder().decode(stderr) };
}

/** Copies `path` (a file or a directory) from the repo into `root`. */
async function copy(path: string, root: string): Promise<void> {
  const from = join(ROOT, path);
  if ((await Deno.stat(from)).isDirectory) {
    for await (const entry of Deno.readDir(from)) {
      await copy(join(path, entry.name), root);
    }
    return;
  }
  await Deno.mkdir(dirname(join(root, path)), { recursive: true });
  await Deno.copyFile(from, join(root, path));
}

Deno.test("the embedded page code is what deno task gen builds from the page sources, and starts with the generated line", async () => {
  const embedded = await Deno.readTextFile(join(ROOT, EMBEDDED));
  assert.equal(embedded.split("\n")[0], GENERATED);
  assert.equal(embedded, await buildPage(), "deno task gen was run");
});

Deno.test("the stale check fails when a page source changes without regenerating, and passes once regenerated", async () => {
  const root = await Deno.makeTempDir();
  try {
    for (
      const path of [
        "deno.json",
        "commands/serve/page",
        "lib/render/duration.ts",
        "lib/status/attention_text.ts",
        "lib/shared/snapshot_schema.ts",
        "lib/shared/events.ts",
        "lib/shared/view.ts",
        EMBEDDED,
      ]
    ) {
      await copy(path, root);
    }
    assert.equal((await gen(root, true)).code, 0, "a fresh copy passes");
    const source = join(root, "commands", "serve", "page", "shared.ts");
    const text = await Deno.readTextFile(source);
    await Deno.writeTextFile(
      source,
      text.replace(
        'export const UNKNOWN = "—";',
        'export const UNKNOWN = "?";',
      ),
    );
    const stale = await gen(root, true);
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /^error: commands\/serve\/_app_js\.ts is stale/);
    assert.match(stale.stderr, /hint: run deno task gen/);
    assert.equal((await gen(root, false)).code, 0);
    assert.equal((await gen(root, true)).code, 0, "regenerated, it passes");
    assert.match(await Deno.readTextFile(join(root, EMBEDDED)), /"\?"/);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
