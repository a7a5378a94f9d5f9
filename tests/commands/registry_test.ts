import assert from "node:assert/strict";
import { COMMANDS } from "../../commands/_registry.ts";
import { CONTROL_COMMANDS } from "../../commands/control/_registry.ts";
import { onlyAsksForHelp } from "../../commands/_dispatch.ts";

Deno.test("every command listed has its help without loading, and loads as the command it names", async () => {
  for (
    const [prefix, entries] of [["", COMMANDS], [
      "control ",
      CONTROL_COMMANDS,
    ]] as const
  ) {
    for (const entry of entries) {
      const help = await entry.help();
      assert.ok(
        help.startsWith(`Usage: prompt_runner ${prefix}${entry.name} `),
        `${prefix}${entry.name}: ${help.slice(0, 60)}`,
      );
      const command = await entry.load();
      assert.equal(command.name, entry.name);
      assert.equal(command.summary, entry.summary);
      assert.equal(command.help, help);
      assert.equal(typeof command.run, "function");
    }
  }
  assert.deepEqual(COMMANDS.map((c) => c.name), [
    "run",
    "status",
    "watch",
    "control",
    "workspace",
    "serve",
    "fleet",
  ]);
  assert.deepEqual(CONTROL_COMMANDS.map((c) => c.name), [
    "status",
    "events",
    "log",
    "view",
    "steer",
    "contract",
    "amend",
    "relax",
  ]);
});

Deno.test("onlyAsksForHelp() is true for help flags alone", () => {
  assert.ok(onlyAsksForHelp(["--help"]));
  assert.ok(onlyAsksForHelp(["-h", "--help"]));
  assert.ok(!onlyAsksForHelp([]));
  assert.ok(!onlyAsksForHelp(["--help", "x"]));
  assert.ok(!onlyAsksForHelp(["--", "--help"]));
});

/** The modules a file loads before it runs: its static imports, transitively. */
async function startupGraph(file: string): Promise<string[]> {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", new URL(file, import.meta.url).pathname],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(output.success);
  const info = JSON.parse(new TextDecoder().decode(output.stdout));
  const modules = new Map<string, { dependencies?: unknown[] }>(
    info.modules.map((m: { specifier: string }) => [m.specifier, m]),
  );
  const seen = new Set<string>();
  const stack = [...info.roots];
  while (stack.length > 0) {
    const specifier = stack.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (
      const dep of (modules.get(specifier)?.dependencies ?? []) as {
        isDynamic?: boolean;
        code?: { specifier?: string };
      }[]
    ) {
      if (!dep.isDynamic && dep.code?.specifier) stack.push(dep.code.specifier);
    }
  }
  return [...seen];
}

Deno.test("main.ts loads no command's code, no YAML parser and no node: module to start", async () => {
  const graph = await startupGraph("../../main.ts");
  for (const specifier of graph) {
    assert.ok(!specifier.startsWith("node:"), specifier);
    assert.ok(!specifier.startsWith("npm:"), specifier);
    assert.ok(!/\/commands\/(run|status)\.ts$/.test(specifier), specifier);
    assert.ok(
      !/\/commands\/control\/(?!_)[a-z]+\.ts$/.test(specifier),
      specifier,
    );
  }
  assert.ok(graph.length < 20, graph.join(", "));
});

Deno.test("control status loads no YAML parser, no node: module and no runner to start", async () => {
  for (
    const specifier of await startupGraph("../../commands/control/status.ts")
  ) {
    assert.ok(!specifier.startsWith("node:"), specifier);
    assert.ok(!specifier.startsWith("npm:"), specifier);
    assert.ok(!specifier.includes("/lib/runner/"), specifier);
    assert.ok(!specifier.includes("/lib/control/plane"), specifier);
  }
});
