/**
 * The Claude Code adapter: `claude -p --output-format stream-json
 * --verbose`, with the prompt after `--` (`--add-dir` and `--allowedTools`
 * take several values and would swallow it), or on stdin as stream-json
 * frames when the session takes live input (the send_input lane).
 *
 * A steer on that lane is two frames: an `interrupt` control request, then
 * the steer's user frame. The interrupt ends the turn in flight at once
 * (streaming or running a tool) with a `result` whose `terminal_reason` is
 * `aborted_streaming` or `aborted_tools`; the queued frame then runs as the
 * next turn of the same session and ends with its own `result`. The reverse
 * order races: a frame that reaches an idle CLI starts a turn that the
 * interrupt then aborts. Both 2.1.197 and 2.1.332 behave this way.
 *
 * @module
 */

import type {
  AgentOptions,
  CliFrames,
  CliInput,
  CliInvocation,
  CliParser,
  CliProfile,
} from "./cli_profile.ts";
import { ClaudeParser } from "./_claude_parser.ts";

function optionArgs(invocation: CliInvocation): string[] {
  const { model, options } = invocation;
  const args: string[] = [];
  if (model !== null && model !== "") args.push("--model", model);
  if (options.permission_mode !== null) {
    args.push("--permission-mode", options.permission_mode);
  }
  if (options.allowed_tools !== null && options.allowed_tools.length > 0) {
    args.push("--allowedTools", options.allowed_tools.join(","));
  }
  if (options.max_turns !== null) {
    args.push("--max-turns", String(options.max_turns));
  }
  for (const dir of options.add_dirs) args.push("--add-dir", dir);
  // The runner stops the attempt at the budget too; Claude's own ceiling
  // holds even between two usage reports.
  if (invocation.maxBudgetUsd !== undefined) {
    args.push("--max-budget-usd", invocation.maxBudgetUsd.toFixed(6));
  }
  if (options.reasoning_effort !== null) {
    args.push("--effort", options.reasoning_effort);
  }
  return args;
}

function tail(invocation: CliInvocation): string[] {
  // The live lane takes the prompt as the first stdin frame.
  // `--replay-user-messages` echoes each stdin frame as its turn takes it:
  // a steer is delivered when its echo comes back.
  return invocation.liveInput
    ? ["--input-format", "stream-json", "--replay-user-messages"]
    : ["--", invocation.text];
}

const OUTPUT = ["--output-format", "stream-json", "--verbose"];

function userFrame(text: string, uuid = crypto.randomUUID()): string {
  return JSON.stringify({
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: null,
    session_id: "",
    uuid,
  });
}

/** Claude Code's stdin frames (`--input-format stream-json`). */
export const CLAUDE_INPUT: CliInput = {
  prompt(text: string): string[] {
    return [userFrame(text)];
  },
  steer(text: string): CliFrames {
    const interrupt = JSON.stringify({
      type: "control_request",
      request_id: `steer_${crypto.randomUUID()}`,
      request: { subtype: "interrupt" },
    });
    const echo = crypto.randomUUID();
    return { frames: [interrupt, userFrame(text, echo)], echo };
  },
};

/** The claude CLI's profile. */
export const claudeProfile: CliProfile = {
  name: "claude",
  binName: "claude",
  defaultModel: "default",
  liveInput(options: AgentOptions, maxSteers: number): boolean {
    return maxSteers > 0 && options.steer_lane !== "resume";
  },
  startArgs(invocation: CliInvocation): string[] {
    return ["-p", ...OUTPUT, ...optionArgs(invocation), ...tail(invocation)];
  },
  resumeArgs(invocation: CliInvocation, sessionId: string): string[] {
    return [
      "-p",
      "--resume",
      sessionId,
      ...OUTPUT,
      ...optionArgs(invocation),
      ...tail(invocation),
    ];
  },
  env(): Record<string, string> {
    // No update checks, telemetry or other side traffic in unattended runs.
    // IS_SANDBOX is never set here: Claude Code refuses bypassPermissions as
    // root for a reason, and only the operator can say the run is sandboxed
    // (agent.env.IS_SANDBOX; the runner refuses the packet otherwise).
    return {
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    };
  },
  parser(): CliParser {
    return new ClaudeParser();
  },
  input: CLAUDE_INPUT,
};
