/**
 * The simulated provider: plays a prompt's `simulate:` script as a live
 * agent session, with delays, tool calls, file writes, errors, and both
 * steering lanes. It needs no credentials and no network.
 *
 * @module
 */

import { dirname, isAbsolute, resolve } from "node:path";
import type { ProviderEvent } from "../shared/events.ts";
import { sleep } from "../shared/sleep.ts";
import { FAILURE_KINDS } from "./failure.ts";
import type {
  Provider,
  ResumeRequest,
  Session,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";

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
  /** Token usage reported at the end. */
  usage: { input_tokens: number; output_tokens: number } | null;
  /** A failure that ends the turn. */
  error: { kind: string; message: string; recovery: unknown } | null;
}

/** A parsed `simulate:` script. */
export interface SimulatedScript {
  /** How a steer arrives: `resume` (interrupt and resume) or `stdin`. */
  lane: "resume" | "stdin";
  /** `attempts[k]` drives attempt k+1. */
  attempts: SimulatedStep[];
  /** The step played when the session is resumed after a failure. */
  resume: SimulatedStep | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
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
  const known = [
    "delay_ms",
    "repeat",
    "thinking",
    "messages",
    "tools",
    "writes",
    "usage",
    "error",
    "label",
  ];
  for (const key of Object.keys(step)) {
    if (!known.includes(key)) {
      fail(`${where} has unknown key "${key}" (expected ${known.join(", ")})`);
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
    };
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
    return { lane: "resume", attempts: [], resume: null };
  }
  if (!isRecord(raw)) fail("simulate must be a mapping");
  const script = raw as Record<string, unknown>;
  for (const key of Object.keys(script)) {
    if (!["lane", "attempts", "resume"].includes(key)) {
      fail(
        `simulate has unknown key "${key}" (expected lane, attempts, resume)`,
      );
    }
  }
  const lane = script.lane ?? "resume";
  if (lane !== "resume" && lane !== "stdin") {
    fail(
      `simulate.lane must be resume or stdin, found ${JSON.stringify(lane)}`,
    );
  }
  const attempts = script.attempts ?? [];
  if (!Array.isArray(attempts)) fail("simulate.attempts must be a list");
  return {
    lane: lane as "resume" | "stdin",
    attempts: (attempts as unknown[]).map((step, i) =>
      parseStep(step, `simulate.attempts[${i}]`, fail)
    ),
    resume: script.resume === undefined || script.resume === null
      ? null
      : parseStep(script.resume, "simulate.resume", fail),
  };
}

const EMPTY_STEP: SimulatedStep = parseStep({}, "", () => {
  throw new Error("unreachable");
});

function chunks(text: string): string[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  const result: string[] = [];
  for (let i = 0; i < words.length; i += 4) {
    result.push(words.slice(i, i + 4).join(""));
  }
  return result.length ? result : [text];
}

/** Builds the events a step plays, after its `run_started`. */
function stepEvents(step: SimulatedStep, sessionId: string): ProviderEvent[] {
  const events: ProviderEvent[] = [];
  let toolNumber = 0;
  for (let round = 0; round < step.repeat; round++) {
    for (const thought of step.thinking) {
      for (const delta of chunks(thought)) {
        events.push({
          type: "message_streamed",
          data: { delta, kind: "thinking" },
        });
      }
    }
    for (const message of step.messages) {
      for (const delta of chunks(message)) {
        events.push({
          type: "message_streamed",
          data: { delta, kind: "text" },
        });
      }
      events.push({
        type: "message_received",
        data: { content: message, role: "assistant" },
      });
    }
    for (const tool of step.tools) {
      const id = `${sessionId}-t${++toolNumber}`;
      events.push({
        type: "tool_call_started",
        data: {
          tool_call_id: id,
          tool_name: tool.name,
          tool_input: tool.input,
        },
      });
      events.push({
        type: tool.error ? "tool_call_failed" : "tool_call_completed",
        data: {
          tool_call_id: id,
          tool_name: tool.name,
          tool_output: tool.output,
          is_error: tool.error,
        },
      });
    }
    if (step.usage) {
      // Running totals, as agents report them: each round adds the step's usage.
      const input = step.usage.input_tokens * (round + 1);
      const output = step.usage.output_tokens * (round + 1);
      events.push({
        type: "token_usage_updated",
        data: {
          input_tokens: input,
          output_tokens: output,
          total_tokens: input + output,
        },
      });
    }
  }
  if (step.error) {
    const providerError = {
      provider: "simulated",
      kind: step.error.kind,
      message: step.error.message,
      ...(step.error.recovery ? { recovery: step.error.recovery } : {}),
    };
    const data = {
      error_code: step.error.kind,
      error_message: step.error.message,
      provider_error: providerError,
    };
    events.push({ type: "error_occurred", data });
    events.push({ type: "run_failed", data });
  } else {
    events.push({ type: "run_completed", data: { stop_reason: "end_turn" } });
  }
  return events;
}

async function applyWrites(
  step: SimulatedStep,
  request: SessionRequest,
): Promise<void> {
  for (const write of step.writes) {
    let root = request.cwd;
    if (write.repo !== null) {
      const repoPath = request.repos[write.repo];
      if (repoPath === undefined) {
        throw new Error(`simulated write names unknown repo "${write.repo}"`);
      }
      root = repoPath;
    }
    const path = isAbsolute(write.path)
      ? write.path
      : resolve(root, write.path);
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, write.text, { append: write.append });
  }
}

class SimulatedSession implements Session {
  readonly meta: SessionMeta;
  readonly acceptsInputAfterStart: boolean;
  readonly events: AsyncIterable<ProviderEvent>;
  #interrupted = new AbortController();
  #inbox: string[] = [];
  #queue: ProviderEvent[];
  #delayMs: number;
  #signal: AbortSignal;

  constructor(
    meta: SessionMeta,
    lane: "resume" | "stdin",
    queue: ProviderEvent[],
    delayMs: number,
    signal: AbortSignal,
  ) {
    this.meta = meta;
    this.acceptsInputAfterStart = lane === "stdin";
    this.#queue = queue;
    this.#delayMs = delayMs;
    this.#signal = signal;
    this.events = this.#play();
  }

  async *#play(): AsyncGenerator<ProviderEvent> {
    const stop = AbortSignal.any([this.#signal, this.#interrupted.signal]);
    try {
      while (this.#queue.length > 0) {
        await sleep(this.#delayMs, stop);
        if (stop.aborted) break;
        const quoted = this.#inbox.shift();
        if (quoted !== undefined) {
          yield quoteSteer(quoted);
          continue;
        }
        yield this.#queue.shift()!;
      }
    } finally {
      // What was not played is where a steer-resume carries on.
      this.meta.remaining = this.#queue;
    }
  }

  interrupt(): void {
    this.#interrupted.abort();
  }

  send(text: string): Promise<void> {
    if (!this.acceptsInputAfterStart) {
      return Promise.reject(new Error("this session does not accept input"));
    }
    if (this.#queue.length === 0) {
      return Promise.reject(new Error("no active turn"));
    }
    this.#inbox.push(text);
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#interrupted.abort();
    return Promise.resolve();
  }
}

function quoteSteer(text: string): ProviderEvent {
  return {
    type: "message_received",
    data: {
      role: "assistant",
      content: `Steer received: "${text}". Carrying on with the task.`,
    },
  };
}

/**
 * Creates the simulated provider.
 *
 * @returns A provider that plays `simulate:` scripts.
 */
export function createSimulatedProvider(): Provider {
  return {
    name: "simulated",
    defaultModel: "simulated",
    checkScript(script: unknown): string | null {
      try {
        parseSimulatedScript(script);
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    },
    async start(request: SessionRequest): Promise<Session> {
      const script = parseSimulatedScript(request.script);
      const step = script.attempts[request.ordinal - 1] ?? EMPTY_STEP;
      await applyWrites(step, request);
      const sessionId = `sim-${request.prompt_id}-${request.attempt}`;
      const meta: SessionMeta = {
        provider: "simulated",
        session_id: sessionId,
        model: request.model ?? "simulated",
        resumes: 0,
      };
      const queue: ProviderEvent[] = [
        startedEvent(meta),
        ...stepEvents(step, sessionId),
      ];
      return new SimulatedSession(
        meta,
        script.lane,
        queue,
        step.delay_ms,
        request.signal,
      );
    },
    async resume(meta: SessionMeta, request: ResumeRequest): Promise<Session> {
      const script = parseSimulatedScript(request.script);
      const next: SessionMeta = {
        ...meta,
        resumes: (meta.resumes as number) + 1,
        remaining: [],
      };
      let queue: ProviderEvent[];
      let delay: number;
      const step = script.attempts[request.ordinal - 1] ?? EMPTY_STEP;
      if (request.cause === "steer") {
        // The resumed thread acknowledges the steer, then finishes the turn.
        const remaining = (meta.remaining as ProviderEvent[] | undefined) ?? [];
        queue = [
          startedEvent(next),
          quoteSteer(request.steer ?? request.text),
          ...(remaining.length ? remaining : [
            {
              type: "run_completed",
              data: { stop_reason: "end_turn" },
            } as ProviderEvent,
          ]),
        ];
        delay = step.delay_ms;
      } else {
        const resumeStep = script.resume ?? EMPTY_STEP;
        await applyWrites(resumeStep, request);
        queue = [
          startedEvent(next),
          ...stepEvents(resumeStep, `${meta.session_id}-r${next.resumes}`),
        ];
        delay = resumeStep.delay_ms;
      }
      return new SimulatedSession(
        next,
        script.lane,
        queue,
        delay,
        request.signal,
      );
    },
  };
}

function startedEvent(meta: SessionMeta): ProviderEvent {
  return {
    type: "run_started",
    data: {
      provider: "simulated",
      model: meta.model,
      provider_session_id: meta.session_id,
      simulated: true,
    },
  };
}
