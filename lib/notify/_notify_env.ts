/**
 * The environment a notification command runs with: the runner's own,
 * with the `PROMPT_RUNNER_*` variables of this notification in place of
 * any it inherited.
 *
 * @module
 */

import type { RunEvent } from "../shared/events.ts";
import type { NotifyOn } from "../shared/notify_rule.ts";

/** The run the notifications are about (given to commands as variables). */
export interface NotifyRun {
  /** The run's id. */
  run_id: string;
  /** Its state root. */
  state_root: string;
  /** The packet's name. */
  packet: string;
  /** The packet directory. */
  packet_dir: string;
}

/** The variables a notification sets (inherited ones are replaced or removed). */
export const NOTIFY_VARIABLES = [
  "PROMPT_RUNNER_EVENT",
  "PROMPT_RUNNER_EVENT_TYPE",
  "PROMPT_RUNNER_SEQ",
  "PROMPT_RUNNER_RUN_ID",
  "PROMPT_RUNNER_STATE_ROOT",
  "PROMPT_RUNNER_PACKET",
  "PROMPT_RUNNER_PACKET_DIR",
  "PROMPT_RUNNER_PROMPT_ID",
  "PROMPT_RUNNER_STATUS",
  "PROMPT_RUNNER_REASON",
] as const;

/** An environment value: no NUL (which no environment can hold). */
function value(text: string): string {
  return text.replaceAll("\0", "");
}

function inherited(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {}; // No --allow-env: the command gets only its own variables.
  }
}

/**
 * A command's environment for one notification: `PROMPT_RUNNER_EVENT` (the
 * moment), `_EVENT_TYPE`, `_SEQ`, `_RUN_ID`, `_STATE_ROOT`, `_PACKET`,
 * `_PACKET_DIR`, and when the event has them `_PROMPT_ID`, `_STATUS` (a
 * run's end) and `_REASON` (the attention reason, or why the run ended).
 */
export function notifyEnv(
  on: NotifyOn,
  event: RunEvent,
  run: NotifyRun,
): Record<string, string> {
  const env = inherited();
  for (const name of NOTIFY_VARIABLES) delete env[name];
  const data = event.data as Record<string, unknown>;
  const promptId = event.prompt_id ??
    (typeof data.prompt_id === "string" ? data.prompt_id : null);
  Object.assign(env, {
    PROMPT_RUNNER_EVENT: on,
    PROMPT_RUNNER_EVENT_TYPE: event.type,
    PROMPT_RUNNER_SEQ: String(event.seq),
    PROMPT_RUNNER_RUN_ID: value(run.run_id),
    PROMPT_RUNNER_STATE_ROOT: value(run.state_root),
    PROMPT_RUNNER_PACKET: value(run.packet),
    PROMPT_RUNNER_PACKET_DIR: value(run.packet_dir),
  });
  if (promptId !== null) env.PROMPT_RUNNER_PROMPT_ID = value(promptId);
  if (event.type === "run_finished") {
    env.PROMPT_RUNNER_STATUS = event.data.status;
  }
  if (typeof data.reason === "string" && data.reason !== "") {
    env.PROMPT_RUNNER_REASON = value(data.reason);
  }
  return env;
}
