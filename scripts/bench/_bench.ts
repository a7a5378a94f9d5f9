/**
 * What every benchmark in `scripts/bench/` shares: medians, timing a
 * subprocess, and the row each one reports. A benchmark run with `--json`
 * prints one {@linkcode BenchRow} per line (NDJSON) after its human text on
 * stderr; `scripts/bench/all.ts` collects them into one markdown table.
 *
 * @module
 */

// deno-lint-ignore-file no-console

/** One measured row: a figure beside its baseline from the same run. */
export interface BenchRow {
  /** What is measured. */
  measure: string;
  /** The baseline and its figure, e.g. `cat: 4.6 GB/s`. */
  baseline: string;
  /** Our figure, e.g. `1.2 GB/s, 41 MiB RSS`. */
  result: string;
  /** The ratio to the baseline, as printed, e.g. `1.07×`. */
  ratio: string;
  /** The target, as the issue states it. */
  target: string;
  /** Whether the target is met. */
  met: boolean;
  /** What explains a miss, or anything else worth knowing. */
  note?: string;
}

/** The median of some numbers (the upper one of an even count). */
export function median(values: number[]): number {
  if (values.length === 0) throw new Error("median of nothing");
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The `p`th percentile (0–100) of some numbers, nearest rank. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) throw new Error("percentile of nothing");
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))]!;
}

/** `a / b` as `1.23×`. */
export function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

/** The permissions every benchmark subprocess of `main.ts` gets (the CLI's), and the CLI entry point. */
export { CLI_PERMISSIONS, MAIN } from "../_harness/cli.ts";

/**
 * Prints rows: NDJSON on stdout with `--json`, otherwise an aligned text
 * table on stdout.
 */
export function report(rows: BenchRow[], args: string[] = Deno.args): void {
  if (args.includes("--json")) {
    for (const row of rows) console.log(JSON.stringify(row));
    return;
  }
  for (const row of rows) {
    console.log(
      `${row.measure}\n  baseline ${row.baseline}\n  now      ${row.result}  (${row.ratio}; target ${row.target}: ${
        row.met ? "met" : "MISSED"
      })${row.note ? `\n  note     ${row.note}` : ""}`,
    );
  }
}

/** Progress for a long benchmark, on stderr. */
export function progress(text: string): void {
  console.error(text);
}

/**
 * Writes a one-prompt simulated packet into `dir` (made when absent): the
 * prompt's first attempt is `attempt`, the YAML lines under `- ` (indented
 * by the caller's keys only).
 *
 * @returns `dir`.
 */
export async function simulatedPacket(
  dir: string,
  attempt: string[],
): Promise<string> {
  await Deno.mkdir(`${dir}/prompts`, { recursive: true });
  await Deno.writeTextFile(
    `${dir}/prompt_runner_packet.md`,
    "---\nprovider: simulated\n---\n",
  );
  const [first, ...rest] = attempt;
  await Deno.writeTextFile(
    `${dir}/prompts/01_bench.prompt.md`,
    [
      "---",
      "simulate:",
      "  attempts:",
      `    - ${first ?? "messages: [done]"}`,
      ...rest.map((line) => `      ${line}`),
      "---",
      "Work.",
      "",
    ].join("\n"),
  );
  return dir;
}

/** Events per round of {@linkcode loadRound}. */
export const EVENTS_PER_ROUND = 6;

/**
 * An attempt of `rounds` rounds of six events each: a thought, a message
 * (delta and whole), a tool call (start and end), and usage.
 */
export function loadRound(rounds: number): string[] {
  return [
    `repeat: ${rounds}`,
    'thinking: ["thinking it over"]',
    'messages: ["working on it"]',
    "tools: [{name: Bash, input: {command: ls}, output: a.md}]",
    "usage: {input_tokens: 100, output_tokens: 10}",
  ];
}

/** A temporary directory for a benchmark. */
export async function benchDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "prompt_runner_bench_" });
}
