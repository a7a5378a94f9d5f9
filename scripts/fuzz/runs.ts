/**
 * The fuzz's packet (simulated prompts on both steering lanes) and one run
 * of it, through the real CLI.
 *
 * @module
 */

import { join } from "node:path";
import { LineReader, readAll, spawnCli } from "../_harness/mod.ts";
import { makeRepo } from "../_harness/repo.ts";
import type { Fuzz } from "./state.ts";

export const PROMPTS = [
  { id: "01", lane: "resume" },
  { id: "02", lane: "stdin" },
  { id: "03", lane: "resume" },
] as const;

export async function writeFuzzPacket(dir: string): Promise<string> {
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

export interface RunOutcome {
  runId: string | null;
  code: number;
  signal: Deno.Signal | null;
  last: Record<string, unknown> | null;
  stderr: string;
}

export async function runOnce(fuzz: Fuzz): Promise<RunOutcome> {
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
