#!/usr/bin/env -S deno run --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * Runs every benchmark in `scripts/bench/` one after another (never two at
 * once: they would measure each other) and prints one markdown table of
 * their rows, each figure beside the baseline measured in the same run, for
 * the README's Performance section.
 *
 *   deno task bench            # all of them
 *   deno task bench replay     # only those whose file name contains "replay"
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BenchRow, CLI_PERMISSIONS } from "./_bench.ts";

const HERE = dirname(fileURLToPath(import.meta.url));

async function scripts(filter: string[]): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(HERE)) {
    if (!entry.isFile || !entry.name.endsWith(".ts")) continue;
    if (entry.name.startsWith("_") || entry.name === "all.ts") continue;
    if (filter.length > 0 && !filter.some((f) => entry.name.includes(f))) {
      continue;
    }
    names.push(join(HERE, entry.name));
  }
  return names.sort();
}

function cell(text: string): string {
  return text.replaceAll("|", "\\|").replaceAll("\n", " ");
}

/** A command's stdout, or "" when it cannot run. */
async function outputOf(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await new Deno.Command(command, {
      args,
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(stdout);
  } catch {
    return "";
  }
}

/** The machine, as the table's caption says it (Deno may not read /proc). */
async function machine(): Promise<string> {
  const cpu = (await outputOf("lscpu", [])).match(/Model name:\s*(.+)/)?.[1]
    ?.trim() ?? "unknown CPU";
  const memory = (await outputOf("free", ["-g"])).match(/Mem:\s+(\d+)/)
    ?.[1];
  return `${navigator.hardwareConcurrency} cores (${cpu}), ${
    memory ?? "?"
  } GiB, Deno ${Deno.version.deno}, ${Deno.build.os}`;
}

async function main(): Promise<number> {
  const rows: BenchRow[] = [];
  const failed: string[] = [];
  for (const script of await scripts(Deno.args)) {
    console.error(`# ${basename(script)}`);
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", ...CLI_PERMISSIONS, script, "--json"],
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const { code, stdout } = await child.output();
    const text = new TextDecoder().decode(stdout);
    for (const line of text.split("\n")) {
      if (!line.startsWith("{")) continue;
      rows.push(JSON.parse(line) as BenchRow);
    }
    if (code !== 0) failed.push(`${basename(script)} (exit ${code})`);
  }
  console.log(`Measured on ${await machine()}; medians.\n`);
  console.log("| measure | baseline | prompt_runner | ratio | target | met |");
  console.log("|---|---|---|---|---|---|");
  for (const row of rows) {
    console.log(
      `| ${cell(row.measure)} | ${cell(row.baseline)} | ${cell(row.result)} | ${
        cell(row.ratio)
      } | ${cell(row.target)} | ${row.met ? "yes" : "**no**"} |`,
    );
  }
  const notes = rows.filter((row) => row.note);
  if (notes.length > 0) console.log("");
  for (const row of notes) {
    console.log(`- ${cell(row.measure)}: ${cell(row.note!)}`);
  }
  if (failed.length > 0) {
    console.error(`\nbenchmarks that failed: ${failed.join(", ")}`);
    return 1;
  }
  return 0;
}

if (import.meta.main) Deno.exit(await main());
