/**
 * The simulated packet the dashboard's bench and fuzz run: a wait (while
 * browsers or the fuzz connect), then a work prompt of rounds paced like an
 * agent (thinking, a message, a tool call and usage each round).
 *
 * @module
 */

import { join } from "node:path";

/** Options for {@linkcode writePacedPacket}. */
export interface PacedPacketOptions {
  /** The manifest's `name`. */
  name: string;
  /** The manifest's body (after its front matter). */
  body: string;
  /** How long the first prompt waits (ms). */
  waitMs: number;
  /** The work prompt's pace: the delay between its events (ms). */
  delayMs: number;
  /** Its rounds. */
  rounds: number;
}

/** Writes the packet into `dir` (made if missing); returns `dir`. */
export async function writePacedPacket(
  dir: string,
  options: PacedPacketOptions,
): Promise<string> {
  await Deno.mkdir(join(dir, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "prompt_runner_packet.md"),
    `---\nname: ${options.name}\nprovider: simulated\n---\n${options.body}`,
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "01_wait.prompt.md"),
    `---\nsimulate: {attempts: [{delay_ms: ${options.waitMs}, messages: [ready]}]}\n---\nWait.\n`,
  );
  await Deno.writeTextFile(
    join(dir, "prompts", "02_work.prompt.md"),
    [
      "---",
      "simulate:",
      "  attempts:",
      `    - delay_ms: ${options.delayMs}`,
      `      repeat: ${options.rounds}`,
      '      thinking: ["thinking it over"]',
      '      messages: ["working on it"]',
      "      tools: [{name: Bash, input: {command: ls}, output: a.md}]",
      "      usage: {input_tokens: 100, output_tokens: 10}",
      "---",
      "Work.",
      "",
    ].join("\n"),
  );
  return dir;
}
