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
import {
  EMPTY_STEP,
  parseSimulatedScript,
  type SimulatedSteerInput,
  type SimulatedStep,
} from "./simulated_script.ts";
import {
  Acknowledger,
  type Provider,
  type ResumeRequest,
  type Session,
  type SessionMeta,
  type SessionRequest,
  type SteerReceipt,
  TurnOverError,
} from "./provider.ts";
import { errorText } from "../shared/errors.ts";

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
      const cost = step.usage.cost_usd;
      events.push({
        type: "token_usage_updated",
        data: {
          input_tokens: input,
          output_tokens: output,
          total_tokens: input + output,
          ...(cost === null
            ? {}
            : { cost_usd: Math.round(cost * (round + 1) * 1e6) / 1e6 }),
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
  #inbox: { text: string; ack: Acknowledger }[] = [];
  #queue: ProviderEvent[];
  #next = 0;
  #delayMs: number;
  #signal: AbortSignal;

  constructor(
    meta: SessionMeta,
    steerInput: SimulatedSteerInput,
    queue: ProviderEvent[],
    delayMs: number,
    signal: AbortSignal,
  ) {
    this.meta = meta;
    this.acceptsInputAfterStart = steerInput === "stdin";
    this.#queue = queue;
    this.#delayMs = delayMs;
    this.#signal = signal;
    this.events = this.#play();
  }

  /** Events left to play: the queue from `#next` on (an index, not shifts). */
  get #left(): number {
    return this.#queue.length - this.#next;
  }

  async *#play(): AsyncGenerator<ProviderEvent> {
    const stop = AbortSignal.any([this.#signal, this.#interrupted.signal]);
    try {
      while (this.#left > 0) {
        await sleep(this.#delayMs, stop);
        if (stop.aborted) break;
        const quoted = this.#inbox.shift();
        if (quoted !== undefined) {
          quoted.ack.acknowledge("simulated");
          yield quoteSteer(quoted.text);
          continue;
        }
        yield this.#queue[this.#next++]!;
      }
    } finally {
      // What was not played is where a steer-resume carries on.
      this.meta.remaining = this.#queue.slice(this.#next);
      for (const { ack } of this.#inbox.splice(0)) {
        ack.refuse("the turn ended before the simulated agent took it");
      }
    }
  }

  interrupt(): void {
    this.#interrupted.abort();
  }

  send(text: string): Promise<SteerReceipt> {
    if (!this.acceptsInputAfterStart) {
      return Promise.reject(new Error("this session does not accept input"));
    }
    if (this.#left === 0) {
      return Promise.reject(new TurnOverError("no active turn"));
    }
    const ack = new Acknowledger();
    this.#inbox.push({ text, ack });
    return Promise.resolve(ack.delivery);
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

/** A session request for the simulated provider: the script it plays too. */
export interface SimulatedRequest extends SessionRequest {
  /** A prompt's `simulate:` script; absent: the provider's own. */
  script?: unknown;
}

/** A resume request for the simulated provider: the script it plays too. */
export interface SimulatedResumeRequest extends ResumeRequest {
  /** A prompt's `simulate:` script; absent: the provider's own. */
  script?: unknown;
}

/**
 * The simulated provider's own interface: a provider that plays a prompt's
 * `simulate:` script, which only it reads.
 */
export interface SimulatedProvider extends Provider {
  /** Always `simulated`. */
  readonly name: "simulated";
  /**
   * Checks a prompt's `simulate:` script before a run starts.
   *
   * @returns A problem in words, or `null` when the script is fine.
   */
  checkScript(script: unknown): string | null;
  /** The same provider playing `script` in every session it starts. */
  withScript(script: unknown): SimulatedProvider;
  /** Starts a session playing the request's script, else the provider's. */
  start(request: SimulatedRequest): Promise<Session>;
  /** Resumes a session playing the request's script, else the provider's. */
  resume(meta: SessionMeta, request: SimulatedResumeRequest): Promise<Session>;
}

/** Whether `provider` is the simulated one (and takes a script). */
export function isSimulatedProvider(
  provider: Provider,
): provider is SimulatedProvider {
  return provider.name === "simulated" &&
    typeof (provider as Partial<SimulatedProvider>).withScript === "function";
}

/**
 * Creates the simulated provider.
 *
 * @param own The script a session plays when its request names none.
 * @returns A provider that plays `simulate:` scripts.
 */
export function createSimulatedProvider(
  own: unknown = null,
): SimulatedProvider {
  const scriptOf = (request: { script?: unknown }): unknown =>
    request.script === undefined ? own : request.script;
  return {
    name: "simulated",
    defaultModel: "simulated",
    checkScript(script: unknown): string | null {
      try {
        parseSimulatedScript(script);
        return null;
      } catch (error) {
        return errorText(error);
      }
    },
    withScript: (script: unknown): SimulatedProvider =>
      createSimulatedProvider(script),
    async start(request: SimulatedRequest): Promise<Session> {
      const script = parseSimulatedScript(scriptOf(request));
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
        script.steerInput,
        queue,
        step.delay_ms,
        request.signal,
      );
    },
    async resume(
      meta: SessionMeta,
      request: SimulatedResumeRequest,
    ): Promise<Session> {
      const script = parseSimulatedScript(scriptOf(request));
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
        script.steerInput,
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
