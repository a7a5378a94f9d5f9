/**
 * The Amp adapter (`@sourcegraph/amp`, binary `amp`): its argv, and a
 * parser for its Claude Code-compatible `--stream-json` output.
 *
 * Argv choices, each checked against the real argument parser:
 * - The prompt goes in `--execute=<text>`, not `-x <text>`: `-x` takes an
 *   optional value, so a prompt starting with `-` (a Markdown list) is read
 *   as an option (`unknown option '- item'`); the `=` form always binds.
 * - `--stream-json-thinking` (documented; implies `--stream-json`) adds the
 *   thinking blocks that become `message_streamed {kind: "thinking"}`.
 * - The packet's `model` is Amp's mode (`-m low|medium|high|ultra`, or a
 *   plugin mode): Amp picks the model per mode, and `--model` is hidden
 *   from `--help`, so nothing promises it will stay.
 * - `permission_mode: allow_all` is `--dangerously-allow-all` (accepted,
 *   though hidden from `--help`).
 * - No live input: `--stream-json-input` is accepted but its behaviour is
 *   unverified, so a steer interrupts and runs `threads continue`.
 *
 * Credentials come from `AMP_API_KEY` and the server from `AMP_URL`, both
 * in the runner's environment or `agent.env`. Without a key Amp starts an
 * interactive login flow on stdout and waits forever; the parser reports
 * that line as a fatal `provider_auth_claim` so the core kills it at once.
 *
 * @module
 */

import { AmpParser } from "./_amp_parser.ts";
import type { AgentOptions, CliInvocation, CliProfile } from "./cli_profile.ts";

/** The `agent.permission_mode` values Amp accepts. */
export const AMP_PERMISSION_MODES: readonly string[] = ["default", "allow_all"];

/** What status shows when the packet names no mode: Amp picks its own. */
export const AMP_DEFAULT_MODE = "amp-default-mode";

/** The flags every Amp invocation shares (after the prompt). */
function commonArgs(invocation: CliInvocation): string[] {
  const args = ["--stream-json", "--stream-json-thinking"];
  if (invocation.options.permission_mode === "allow_all") {
    args.push("--dangerously-allow-all");
  }
  // The runner fills in `defaultModel` when the packet names none: no -m then.
  const mode = invocation.model;
  if (mode !== null && mode !== AMP_DEFAULT_MODE) args.push("-m", mode);
  return args;
}

/** The amp CLI's profile. */
export const ampProfile: CliProfile = {
  name: "amp",
  binName: "amp",
  defaultModel: AMP_DEFAULT_MODE,
  liveInput(_options: AgentOptions, _maxSteers: number): boolean {
    return false;
  },
  startArgs(invocation: CliInvocation): string[] {
    return [`--execute=${invocation.text}`, ...commonArgs(invocation)];
  },
  resumeArgs(invocation: CliInvocation, sessionId: string): string[] {
    return [
      "threads",
      "continue",
      sessionId,
      `--execute=${invocation.text}`,
      ...commonArgs(invocation),
    ];
  },
  parser(): AmpParser {
    return new AmpParser();
  },
};
