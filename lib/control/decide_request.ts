/**
 * The plane's judgement of one request, as a pure function: what was read
 * from the request file and what the run is doing in, the outcome out. No
 * file is touched here; the request inbox reads and records.
 *
 * @module
 */

import type { BoundaryCommand } from "../shared/run_hooks.ts";
import { parseViewSettings } from "../shared/view.ts";
import type { Outcome } from "./log_entry.ts";
import { requestIdOf } from "./paths.ts";
import { errorText } from "../shared/errors.ts";
import { isRecord } from "../shared/is_record.ts";

/** No request needs more levels than this; a deeper one is refused unread. */
export const MAX_NESTING = 32;

/** What reading a request file gave. */
export type RequestRead =
  /** The file could not be taken as a request: why, and the command to log. */
  | { kind: "unreadable"; reason: string; command: string }
  /** The file's bytes, decoded as JSON (any value). */
  | { kind: "json"; value: unknown };

/** What the decision needs to know of the run. */
export interface RequestRunState {
  /** The run's id. */
  run_id: string;
  /** The prompt running (steers go to it), or `null`. */
  promptInFlight: string | null;
  /** Steers delivered to the current prompt in this run. */
  delivered: number;
  /** Steers accepted for the current prompt and still waiting for their lane. */
  pending: number;
  /** The current prompt's steer budget. */
  max_steers: number;
}

/** The outcome of one request, before it is recorded. */
export interface RequestVerdict {
  /** The command to log (`unparseable`/`unknown` for unreadable requests). */
  command: string;
  /** The params to log. */
  params: Record<string, unknown>;
  /** Who asked, when the request says. */
  author: string | null;
  /** `applied` (set_view), `accepted` (steer) or `rejected`. */
  outcome: Outcome;
  /** Why it was refused. */
  reason: string | null;
  /** The prompt to log. */
  prompt_id: string | null;
  /**
   * What to apply, unless refused; for a refusal, what the runner tells a
   * person (a steer budget spent), if anything.
   */
  apply: BoundaryCommand | null;
}

/** How deeply arrays and objects nest in a value (without recursion). */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_NESTING) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** A request's params as they can be logged (a value JSON cannot write is not). */
export function loggable(
  params: Record<string, unknown>,
  name: string,
): Record<string, unknown> {
  try {
    JSON.stringify(params);
    return params;
  } catch {
    return {
      file: name,
      unrecorded: "the params could not be written as JSON",
    };
  }
}

/**
 * Decides a request: `applied` for a valid view change, `accepted` for a
 * steer within budget for the running prompt, `rejected` with a reason for
 * anything else. Pure: the same input gives the same verdict.
 *
 * @param name The request's file name (`<id>.json`).
 * @param read What was read from the file.
 * @param state The run's state.
 * @returns The verdict.
 */
export function decideRequest(
  name: string,
  read: RequestRead,
  state: RequestRunState,
): RequestVerdict {
  const requestId = requestIdOf(name);
  const reject = (
    reason: string,
    command = "unknown",
    params: Record<string, unknown> = { file: name },
    author: string | null = null,
  ): RequestVerdict => ({
    command,
    params,
    author,
    outcome: "rejected",
    reason,
    prompt_id: state.promptInFlight,
    apply: null,
  });
  if (read.kind === "unreadable") return reject(read.reason, read.command);
  const value = read.value;
  if (nestingDepth(value) > MAX_NESTING) {
    return reject(
      `too deeply nested: more than ${MAX_NESTING} levels of arrays and objects`,
      "unparseable",
    );
  }
  if (!isRecord(value)) {
    const kind = Array.isArray(value)
      ? "an array"
      : value === null
      ? "null"
      : `a ${typeof value}`;
    return reject(`not a JSON object (${kind})`, "unparseable");
  }
  const author = typeof value.author === "string" ? value.author : null;
  if (typeof value.command !== "string" || value.command === "") {
    return reject(
      "the request has no command",
      "unknown",
      { file: name },
      author,
    );
  }
  const command = value.command;
  const params = isRecord(value.params) ? loggable(value.params, name) : {};
  if (value.params !== undefined && !isRecord(value.params)) {
    return reject("params must be a JSON object", command, {}, author);
  }
  if (typeof value.run_id !== "string") {
    return reject(
      "the request names no run_id, so it cannot be matched to this run",
      command,
      params,
      author,
    );
  }
  if (value.run_id !== state.run_id) {
    return reject(
      `the request targets run ${value.run_id}, but this is run ${state.run_id}`,
      command,
      params,
      author,
    );
  }
  const accept = (
    outcome: Outcome,
    logged: Record<string, unknown>,
    apply: BoundaryCommand,
  ): RequestVerdict => ({
    command,
    params: logged,
    author,
    outcome,
    reason: null,
    prompt_id: state.promptInFlight,
    apply,
  });
  if (command === "set_view") {
    try {
      const view = parseViewSettings(params);
      return accept("applied", params, {
        command: "set_view",
        view,
        request_id: requestId,
        author: author ?? "unknown",
      });
    } catch (error) {
      return reject(
        errorText(error),
        command,
        params,
        author,
      );
    }
  }
  if (command === "steer") {
    const text = typeof params.text === "string" ? params.text.trim() : "";
    const target = typeof value.prompt_id === "string" ? value.prompt_id : null;
    const steerParams = { text };
    if (text === "") {
      return reject("empty steer: it has no text", command, params, author);
    }
    const current = state.promptInFlight;
    if (current === null) {
      return reject(
        "no prompt is running, so there is nothing to steer",
        command,
        steerParams,
        author,
      );
    }
    if (target !== null && target !== current) {
      return reject(
        `the steer is for prompt ${target}, but prompt ${current} is running`,
        command,
        steerParams,
        author,
      );
    }
    const used = state.delivered + state.pending;
    if (used >= state.max_steers) {
      const reason =
        `steer budget spent: ${used}/${state.max_steers} for prompt ${current} in this run (raise recovery.max_steers to allow more)`;
      // Refused, and a person is told: an operator's steer did not land.
      return {
        ...reject(reason, command, steerParams, author),
        apply: {
          command: "attention",
          reason: "steer_budget_exhausted",
          prompt_id: current,
          detail: reason,
          request_id: requestId,
        },
      };
    }
    return accept("accepted", steerParams, {
      command: "steer",
      text,
      prompt_id: current,
      request_id: requestId,
      author: author ?? "unknown",
    });
  }
  return reject(
    `unknown command ${JSON.stringify(command)}: expected set_view or steer`,
    command,
    params,
    author,
  );
}
