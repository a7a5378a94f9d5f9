/**
 * The NATS client is loaded only when a fleet is used (issue 21): no module
 * the runtime loads for `--help`, a file-transport command, `run` without
 * `--fleet`, or the library's `mod.ts` reaches `@nats-io/*` (its code
 * dependencies, literal dynamic imports included, are walked). The walk
 * finds the client where it is imported.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../../_helpers/run_cli.ts";

interface Graph {
  roots: string[];
  redirects: Record<string, string>;
  modules: {
    specifier: string;
    dependencies?: { code?: { specifier?: string } }[];
  }[];
}

/** Every module a root's code needs, as the runtime loads them. */
async function loaded(file: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", join(ROOT, file)],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(output.success, new TextDecoder().decode(output.stderr));
  const graph = JSON.parse(new TextDecoder().decode(output.stdout)) as Graph;
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [...graph.roots];
  while (stack.length > 0) {
    const given = stack.pop()!;
    const specifier = graph.redirects[given] ?? given;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dependency of modules.get(specifier)?.dependencies ?? []) {
      const code = dependency.code?.specifier;
      if (code !== undefined) stack.push(code);
    }
  }
  return [...seen];
}

const nats = (specifiers: string[]) =>
  specifiers.filter((s) => /@nats-io|lib\/fleet\/_nats/.test(s));

const FILE_ENTRIES = [
  "main.ts",
  "mod.ts",
  "commands/run.ts",
  "commands/status.ts",
  "commands/serve.ts",
  "commands/control/status.ts",
  "commands/control/events.ts",
  "commands/control/log.ts",
  "commands/control/steer.ts",
  "commands/control/view.ts",
  "commands/control/contract.ts",
  "commands/control/amend.ts",
];

for (const entry of FILE_ENTRIES) {
  Deno.test(`${entry} loads no part of the NATS client`, async () => {
    assert.deepEqual(nats(await loaded(entry)), []);
  });
}

Deno.test("the walk finds the NATS client where it is imported: lib/fleet/_nats.ts", async () => {
  const found = nats(await loaded("lib/fleet/_nats.ts"));
  assert.ok(
    found.some((s) => s.includes("@nats-io/transport-node")),
    found.join("\n"),
  );
});
