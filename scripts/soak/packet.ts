/**
 * The soak's packet: prompts on both steering lanes, paced like an agent,
 * in a git workspace with the pool of files amendments may name.
 *
 * @module
 */

import { join } from "node:path";
import { makeRepo } from "../_harness/repo.ts";

/** The prompts: both steering lanes, twice. */
export const PROMPTS = [
  { id: "01", lane: "resume" },
  { id: "02", lane: "stdin" },
  { id: "03", lane: "resume" },
  { id: "04", lane: "stdin" },
] as const;

/** Each prompt's steer budget. */
export const MAX_STEERS = 4;

/** Files committed in the workspace that amendments may name. */
const POOL = 400;

/** Event pacing of the simulated agent: 6 events per round. */
const DELAY_MS = 40;
const ROUNDS = 8;

/** The `n`th file of the amendment pool. */
export function poolName(n: number): string {
  return `pool/f${String(n % POOL).padStart(3, "0")}.md`;
}

/** The text the `n`th pool file holds. */
export function poolToken(n: number): string {
  return `token-${String(n % POOL).padStart(3, "0")}`;
}

/** One scripted attempt: `rounds` rounds of thinking, message, two tools, usage. */
function step(id: string, rounds: number): string {
  return `    - {delay_ms: ${DELAY_MS}, repeat: ${rounds}, ` +
    `thinking: ["thinking it over"], messages: ["working on it"], ` +
    `tools: [{name: Bash, input: {command: ls}, output: "a.md"}, ` +
    `{name: Edit, input: {file_path: notes_${id}.md, old_string: "a", new_string: "b"}, output: ok}], ` +
    `writes: [{path: out_${id}.md, text: "done ${id}\\n"}], ` +
    `usage: {input_tokens: 100, output_tokens: 10}}`;
}

/** Options for {@linkcode writeSoakPacket}. */
export interface SoakPacketOptions {
  /** Rounds of six events per attempt. */
  rounds?: number;
}

/**
 * Writes the soak packet into `dir`: a git workspace with the amendment
 * pool, and prompts on both steering lanes. A resumed runner plays a
 * prompt's script from its first attempt again (the simulated agent
 * follows the process's attempt ordinal), so one scripted attempt (and a
 * spare) serves every kill.
 *
 * @returns The packet directory.
 */
export async function writeSoakPacket(
  dir: string,
  options: SoakPacketOptions = {},
): Promise<string> {
  const { rounds = ROUNDS } = options;
  const packet = join(dir, "packet");
  const files: Record<string, string> = { "README.md": "soak\n" };
  for (let n = 0; n < POOL; n++) files[poolName(n)] = `${poolToken(n)}\n`;
  await makeRepo(join(packet, "workspace"), files);
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    [
      "---",
      "name: soak",
      "provider: simulated",
      "repos:",
      "  app: {path: workspace, default: true}",
      "recovery:",
      `  max_steers: ${MAX_STEERS}`,
      "  retry: {base_delay_ms: 0, max_delay_ms: 0}",
      "---",
      "The soak packet: long streams on both steering lanes.",
      "",
    ].join("\n"),
  );
  for (const { id, lane } of PROMPTS) {
    const lines = [
      "---",
      `id: "${id}"`,
      `name: Stream ${id}`,
      "verify:",
      `  files_exist: [out_${id}.md]`,
      `  contains: [{path: out_${id}.md, text: "done ${id}"}]`,
      "simulate:",
      `  lane: ${lane}`,
      "  attempts:",
      step(id, rounds),
      step(id, rounds),
      "---",
      `Stream prompt ${id} for the soak.`,
      "",
    ];
    await Deno.writeTextFile(
      join(packet, "prompts", `${id}_stream.prompt.md`),
      lines.join("\n"),
    );
  }
  return packet;
}
