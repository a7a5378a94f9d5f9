/**
 * Temporary packets for tests: a packet directory with a manifest, prompts,
 * and (by default) a git work tree as its default repo.
 *
 * @module
 */

import { join } from "node:path";
import { git, makeRepo } from "../../scripts/_harness/repo.ts";
import { assertTrailHolds } from "./audit_trail.ts";

export { git, makeRepo };

/** A packet made for a test; `await using` removes it. */
export interface TempPacket extends AsyncDisposable {
  /** The temporary directory holding everything. */
  root: string;
  /** The packet directory. */
  dir: string;
  /** The default repo (a git work tree), when one was made. */
  workspace: string;
  /** The packet's default state root. */
  stateRoot: string;
  /** Writes (or replaces) a prompt file. */
  writePrompt(name: string, text: string): Promise<void>;
  /**
   * Whether disposing checks that the state root's audit trail holds
   * (`control log --verify`; default true). A test that damages the trail
   * on purpose (edits the log, plants a link there) sets it false.
   */
  audit: boolean;
}

/** Options for {@linkcode makePacket}. */
export interface MakePacketOptions {
  /** Extra manifest front matter lines (YAML). */
  manifest?: string;
  /** Prompt files by name (`01_x.prompt.md`) with their full text. */
  prompts?: Record<string, string>;
  /** Make `workspace/` a git repo and the default repo (default true). */
  git?: boolean;
  /** Files to commit in the workspace before the run. */
  files?: Record<string, string>;
}

/**
 * Makes a packet in a temporary directory. The manifest uses the simulated
 * provider with retry delays of zero; `options.manifest` adds lines.
 */
export async function makePacket(
  options: MakePacketOptions = {},
): Promise<TempPacket> {
  const root = await Deno.makeTempDir({ prefix: "prompt_runner_test_" });
  const dir = join(root, "packet");
  const workspace = join(dir, "workspace");
  await Deno.mkdir(join(dir, "prompts"), { recursive: true });
  const useGit = options.git ?? true;
  if (useGit) await makeRepo(workspace, options.files);
  else await Deno.mkdir(workspace, { recursive: true });
  const manifest = [
    "---",
    "name: test-packet",
    "provider: simulated",
    "repos:",
    "  app: {path: workspace, default: true}",
    "recovery:",
    "  retry: {base_delay_ms: 0, max_delay_ms: 0}",
    ...(options.manifest ? [options.manifest] : []),
    "---",
    "A packet made by a test.",
    "",
  ].join("\n");
  await Deno.writeTextFile(join(dir, "prompt_runner_packet.md"), manifest);
  const writePrompt = async (name: string, text: string): Promise<void> => {
    await Deno.writeTextFile(join(dir, "prompts", name), text);
  };
  for (const [name, text] of Object.entries(options.prompts ?? {})) {
    await writePrompt(name, text);
  }
  const packet: TempPacket = {
    root,
    dir,
    workspace,
    stateRoot: join(dir, ".prompt_runner"),
    writePrompt,
    audit: true,
    async [Symbol.asyncDispose](): Promise<void> {
      try {
        if (packet.audit) await assertTrailHolds(packet.stateRoot);
      } finally {
        await Deno.remove(root, { recursive: true }).catch(() => {});
      }
    },
  };
  return packet;
}

/** Builds a prompt file from front matter lines and a body. */
export function promptFile(
  frontMatter: string,
  body = "Do the task.\n",
): string {
  return `---\n${frontMatter.trim()}\n---\n${body}`;
}

/**
 * A prompt that plays `rounds` rounds of six events (thinking, a message, a
 * tool call, token usage), `delay` ms apart; `extra` adds front matter.
 */
export function longPrompt(rounds: number, delay = 40, extra = ""): string {
  return promptFile(`${extra}
simulate:
  attempts:
    - delay_ms: ${delay}
      repeat: ${rounds}
      thinking: ["thinking it over"]
      messages: ["working on it"]
      tools: [{name: Bash, input: {command: ls}, output: a.md}]
      usage: {input_tokens: 100, output_tokens: 10}`);
}

const PROMPT_NAME = "01_notes.prompt.md";
const MANIFEST_FILE = "prompt_runner_packet.md";

/** Where a link can lead out of the packet. */
export type PacketPart = "prompt" | "prompts" | "manifest";

/**
 * Moves part of a packet to `ROOT/outside/` and leaves a symbolic link in
 * its place (the prompt is `prompts/01_notes.prompt.md`); returns the link
 * and the file it leads to.
 */
export async function linkOutOfPacket(
  packet: TempPacket,
  part: PacketPart,
): Promise<{ link: string; outside: string }> {
  const outside = join(packet.root, "outside");
  await Deno.mkdir(outside, { recursive: true });
  const from = part === "prompt"
    ? join(packet.dir, "prompts", PROMPT_NAME)
    : part === "prompts"
    ? join(packet.dir, "prompts")
    : join(packet.dir, MANIFEST_FILE);
  const to = part === "prompts"
    ? join(outside, "prompts")
    : join(outside, part === "prompt" ? PROMPT_NAME : MANIFEST_FILE);
  await Deno.rename(from, to);
  await Deno.symlink(to, from);
  return {
    link: from,
    outside: part === "prompts" ? join(to, PROMPT_NAME) : to,
  };
}
