/**
 * The simulated provider's script: the `simulate:` key of a prompt, parsed
 * and checked, naming the key of any mistake.
 *
 * @module
 */

import { SIMULATE_KEYS, SIMULATE_STEP_KEYS } from "../packet/simulate_keys.ts";
import { FAILURE_KINDS } from "./failure.ts";
import { isRecord } from "../shared/is_record.ts";

/** A scripted tool call. */
export interface SimulatedTool {
  /** The tool's name (`Edit`, `Write`, `Bash`, `file_change`, …). */
  name: string;
  /** The tool's input, as the agent would send it. */
  input: Record<string, unknown>;
  /** The tool's output. */
  output: string;
  /** Whether the call fails (`tool_call_failed`). */
  error: boolean;
}

/** A file the step writes when it starts. */
export interface SimulatedWrite {
  /** The path, relative to the repo (or the prompt's working directory). */
  path: string;
  /** The text to write. */
  text: string;
  /** Append instead of replacing. */
  append: boolean;
  /** The repo the path is in. */
  repo: string | null;
}

/** One scripted provider turn. */
export interface SimulatedStep {
  /** A pause before each event, in milliseconds. */
  delay_ms: number;
  /** How many times to play thinking, messages and tools. */
  repeat: number;
  /** Thinking, streamed as `message_streamed` with `kind: thinking`. */
  thinking: string[];
  /** Assistant messages, streamed as deltas and then received whole. */
  messages: string[];
  /** Tool calls. */
  tools: SimulatedTool[];
  /** Files written when the step starts. */
  writes: SimulatedWrite[];
  /** Token usage (and its cost in US dollars, when given) reported at the end. */
  usage:
    | { input_tokens: number; output_tokens: number; cost_usd: number | null }
    | null;
  /** A failure that ends the turn. */
  error: { kind: string; message: string; recovery: unknown } | null;
}

/** How a steer reaches a simulated session: `simulate.lane` in a prompt. */
export type SimulatedSteerInput = "resume" | "stdin";

/** A parsed `simulate:` script. */
export interface SimulatedScript {
  /**
   * How a steer arrives (the script's `lane:` key): `resume` (interrupt and
   * resume) or `stdin` (live input).
   */
  steerInput: SimulatedSteerInput;
  /** `attempts[k]` drives attempt k+1. */
  attempts: SimulatedStep[];
  /** The step played when the session is resumed after a failure. */
  resume: SimulatedStep | null;
}

type Fail = (message: string) => never;

function strings(value: unknown, key: string, fail: Fail): string[] {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((item) => typeof item === "string")) {
    fail(`${key} must be a list of strings`);
  }
  return list as string[];
}

function count(
  value: unknown,
  key: string,
  fallback: number,
  fail: Fail,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    fail(`${key} must be a whole number >= 0`);
  }
  return value;
}

function parseStep(raw: unknown, where: string, fail: Fail): SimulatedStep {
  if (raw === null || raw === undefined) raw = {};
  if (!isRecord(raw)) fail(`${where} must be a mapping`);
  const step = raw as Record<string, unknown>;
  for (const key of Object.keys(step)) {
    if (!SIMULATE_STEP_KEYS.includes(key)) {
      fail(
        `${where} has unknown key "${key}" (expected ${
          SIMULATE_STEP_KEYS.join(", ")
        })`,
      );
    }
  }
  const tools =
    (Array.isArray(step.tools) ? step.tools : step.tools ? [step.tools] : [])
      .map((tool: unknown, index: number): SimulatedTool => {
        if (!isRecord(tool) || typeof tool.name !== "string" || !tool.name) {
          fail(`${where}.tools[${index}] needs a name`);
        }
        const input = tool.input ?? {};
        if (!isRecord(input)) {
          fail(`${where}.tools[${index}].input must be a mapping`);
        }
        const output = tool.output ?? "";
        return {
          name: tool.name,
          input,
          output: typeof output === "string" ? output : JSON.stringify(output),
          error: tool.error === true || typeof tool.error === "string",
        };
      });
  const writes =
    (Array.isArray(step.writes)
      ? step.writes
      : step.writes
      ? [step.writes]
      : [])
      .map((write: unknown, index: number): SimulatedWrite => {
        if (!isRecord(write) || typeof write.path !== "string" || !write.path) {
          fail(`${where}.writes[${index}] needs a path`);
        }
        if (write.text !== undefined && typeof write.text !== "string") {
          fail(`${where}.writes[${index}].text must be a string`);
        }
        if (write.repo !== undefined && typeof write.repo !== "string") {
          fail(`${where}.writes[${index}].repo must be a repo name`);
        }
        return {
          path: write.path,
          text: (write.text as string | undefined) ?? "",
          append: write.append === true,
          repo: (write.repo as string | undefined) ?? null,
        };
      });
  let usage: SimulatedStep["usage"] = null;
  if (step.usage !== undefined) {
    if (!isRecord(step.usage)) fail(`${where}.usage must be a mapping`);
    const u = step.usage as Record<string, unknown>;
    usage = {
      input_tokens: count(
        u.input_tokens,
        `${where}.usage.input_tokens`,
        0,
        fail,
      ),
      output_tokens: count(
        u.output_tokens,
        `${where}.usage.output_tokens`,
        0,
        fail,
      ),
      cost_usd: null,
    };
    if (u.cost_usd !== undefined && u.cost_usd !== null) {
      if (
        typeof u.cost_usd !== "number" || !Number.isFinite(u.cost_usd) ||
        u.cost_usd < 0
      ) {
        fail(`${where}.usage.cost_usd must be a number >= 0`);
      }
      usage.cost_usd = u.cost_usd;
    }
  }
  let error: SimulatedStep["error"] = null;
  if (step.error !== undefined && step.error !== null) {
    if (!isRecord(step.error) || typeof step.error.kind !== "string") {
      fail(`${where}.error needs a kind (${FAILURE_KINDS.join(", ")})`);
    }
    const e = step.error as Record<string, unknown>;
    if (!FAILURE_KINDS.includes(e.kind as string)) {
      fail(
        `${where}.error.kind "${e.kind}" is unknown (expected ${
          FAILURE_KINDS.join(", ")
        })`,
      );
    }
    error = {
      kind: e.kind as string,
      message: typeof e.message === "string" ? e.message : "simulated failure",
      recovery: e.recovery ?? null,
    };
  }
  return {
    delay_ms: count(step.delay_ms, `${where}.delay_ms`, 0, fail),
    repeat: Math.max(1, count(step.repeat, `${where}.repeat`, 1, fail)),
    thinking: strings(step.thinking, `${where}.thinking`, fail),
    messages: strings(step.messages, `${where}.messages`, fail),
    tools,
    writes,
    usage,
    error,
  };
}

/**
 * Parses a `simulate:` script.
 *
 * @param raw The value of the prompt's `simulate:` key (absent is an empty script).
 * @returns The script.
 * @throws {Error} naming the key when the script is malformed.
 */
export function parseSimulatedScript(raw: unknown): SimulatedScript {
  const fail: Fail = (message) => {
    throw new Error(message);
  };
  if (raw === null || raw === undefined) {
    return { steerInput: "resume", attempts: [], resume: null };
  }
  if (!isRecord(raw)) fail("simulate must be a mapping");
  const script = raw as Record<string, unknown>;
  for (const key of Object.keys(script)) {
    if (!SIMULATE_KEYS.includes(key)) {
      fail(
        `simulate has unknown key "${key}" (expected ${
          SIMULATE_KEYS.join(", ")
        })`,
      );
    }
  }
  const steerInput = script.lane ?? "resume";
  if (steerInput !== "resume" && steerInput !== "stdin") {
    fail(
      `simulate.lane must be resume or stdin, found ${
        JSON.stringify(steerInput)
      }`,
    );
  }
  const attempts = script.attempts ?? [];
  if (!Array.isArray(attempts)) fail("simulate.attempts must be a list");
  return {
    steerInput: steerInput as SimulatedSteerInput,
    attempts: (attempts as unknown[]).map((step, i) =>
      parseStep(step, `simulate.attempts[${i}]`, fail)
    ),
    resume: script.resume === undefined || script.resume === null
      ? null
      : parseStep(script.resume, "simulate.resume", fail),
  };
}

/** A step that plays nothing: a turn that ends well at once. */
export const EMPTY_STEP: SimulatedStep = parseStep({}, "", () => {
  throw new Error("unreachable");
});
