/**
 * Big event streams for the replay and seek benchmarks: one real simulated
 * run gives the line templates (every event type a run writes), replayed
 * with new `seq`s into a state root of N events ending in `run_finished`.
 *
 * @module
 */

import { join } from "node:path";
import { CLI_PERMISSIONS, MAIN, progress } from "./_bench.ts";

/** A state root holding one finished run of `events` events. */
export interface StreamRoot {
  /** The state root (what `control events` is given). */
  root: string;
  /** Its events file. */
  file: string;
  /** Its size in bytes. */
  bytes: number;
}

const PROMPT = `---
simulate:
  attempts:
    - repeat: 20
      thinking: ["Reading the ADR first, then the tests that cover the parser."]
      messages: ["Creating the notes file with a summary of the change and its risks."]
      tools:
        - {name: Edit, input: {file_path: src/parse/front_matter.ts, old_string: "const limit = 1;", new_string: "const limit = 2;"}, output: "ok"}
        - {name: Bash, input: {command: "deno test -A tests/parse"}, output: "ok | 12 passed | 0 failed (1s)"}
      usage: {input_tokens: 1200, output_tokens: 340}
---
Work.
`;

/** Runs one simulated run in `dir` and returns its state root. */
async function sampleRun(dir: string): Promise<string> {
  const packet = join(dir, "sample");
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    "---\nprovider: simulated\n---\n",
  );
  await Deno.writeTextFile(
    join(packet, "prompts", "01_load.prompt.md"),
    PROMPT,
  );
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...CLI_PERMISSIONS, MAIN, "run", packet, "--json"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (run.code !== 0) {
    throw new Error(
      `sample run failed: ${new TextDecoder().decode(run.stderr)}`,
    );
  }
  return join(packet, ".prompt_runner");
}

/**
 * Makes a state root in `dir` whose current run has `events` events: the
 * sample run's snapshot, and its lines repeated with `seq` renumbered.
 */
export async function makeStreamRoot(
  dir: string,
  name: string,
  events: number,
): Promise<StreamRoot> {
  const sample = join(dir, "sample", ".prompt_runner");
  try {
    await Deno.lstat(sample);
  } catch {
    await sampleRun(dir);
  }
  const lines =
    (await Deno.readTextFile(join(sample, "control", "events.jsonl")))
      .trimEnd().split("\n");
  // Each template without its seq: `{"v":1,"seq":` + seq + rest.
  const rests = lines.map((line) => line.slice(line.indexOf(",", 13)));
  const finished = rests.pop()!;
  const root = join(dir, name);
  await Deno.mkdir(join(root, "control", "events"), { recursive: true });
  await Deno.copyFile(
    join(sample, "control", "snapshot.json"),
    join(root, "control", "snapshot.json"),
  );
  const file = join(root, "control", "events.jsonl");
  progress(`writing ${events.toLocaleString("en")} events to ${file}`);
  using out = await Deno.open(file, { write: true, create: true, mode: 0o600 });
  const encoder = new TextEncoder();
  let chunk = "";
  let bytes = 0;
  for (let seq = 1; seq <= events; seq++) {
    const rest = seq === events ? finished : rests[(seq - 1) % rests.length]!;
    chunk += `{"v":1,"seq":${seq}${rest}\n`;
    if (chunk.length > 4 * 1024 * 1024 || seq === events) {
      const encoded = encoder.encode(chunk);
      let at = 0;
      while (at < encoded.length) at += await out.write(encoded.subarray(at));
      bytes += encoded.length;
      chunk = "";
    }
  }
  return { root, file, bytes };
}

/** Runs a command with stdout to /dev/null; its wall time and peak RSS. */
export async function measure(
  command: string[],
): Promise<{ ms: number; rssKiB: number; code: number }> {
  const start = performance.now();
  const output = await new Deno.Command("/usr/bin/time", {
    args: ["-f", "RSS_KIB %M", ...command],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - start;
  const stderr = new TextDecoder().decode(output.stderr);
  const rss = /RSS_KIB (\d+)/.exec(stderr);
  if (rss === null) throw new Error(`no RSS from /usr/bin/time: ${stderr}`);
  return { ms, rssKiB: Number(rss[1]), code: output.code };
}

/** The argv of `main.ts control events ROOT …`. */
export function controlEvents(root: string, ...flags: string[]): string[] {
  return [
    Deno.execPath(),
    "run",
    "--quiet",
    ...CLI_PERMISSIONS,
    MAIN,
    "control",
    "events",
    root,
    ...flags,
  ];
}
