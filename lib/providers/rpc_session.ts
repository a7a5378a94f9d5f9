/**
 * The shared core of the JSON-RPC live lanes (`codex app-server`, ACP
 * agents): one agent process (`agent_process.ts`) spoken to over stdio by
 * a {@linkcode JsonRpcPeer}; other lines go to the transcript. The subclass
 * maps the protocol to canonical events and says when the turn is over; a
 * process that ends first is a `transport_disconnect` (unless the runner
 * interrupted it). An interrupt asks the protocol first; a turn not ended
 * after the grace period gets SIGINT, then SIGKILL, to its process group.
 * A steer is handed to the subclass with an {@linkcode Acknowledger}, and
 * refused if still unacknowledged when the stream ends.
 *
 * @module
 */

import {
  AgentProcess,
  disconnected,
  INTERRUPT_GRACE_MS,
  startedEvent,
} from "./agent_process.ts";
import type { CliFailure } from "./cli_profile.ts";
import { failureEvents } from "./failure_events.ts";
import { JsonRpcPeer } from "./json_rpc.ts";
import {
  Acknowledger,
  type AgentProcessRef,
  type Session,
  type SessionMeta,
  type SessionRequest,
  type SteerReceipt,
  TurnOverError,
} from "./provider.ts";
import { noteLine } from "./cli_session.ts";
import { classifyFailure } from "./failure.ts";
import type { ProviderEvent } from "../shared/events.ts";
import { errorText } from "../shared/errors.ts";

const ENDING_TYPES = new Set(["run_completed", "run_failed", "error_occurred"]);

/** What a live-lane session is started with. */
export interface RpcSessionInit {
  /** The provider's name. */
  name: string;
  /** The executable. */
  bin: string;
  /** Its arguments. */
  args: string[];
  /** Its whole environment. */
  env: Record<string, string>;
  /** The attempt's request (text, cwd, options, note, signal). */
  request: SessionRequest;
  /** The thread or session to resume, or `null` for a new one. */
  resumeId: string | null;
  /** The model shown until the agent names its own. */
  model: string;
  /** The CLI's version, for `run_started`. */
  version: string | null;
  /**
   * How long the protocol's interrupt has to end the turn, and then SIGINT
   * to end the process, before the next step (default
   * {@linkcode INTERRUPT_GRACE_MS}).
   */
  graceMs?: number;
}

/** One agent process on a JSON-RPC live lane, as a provider session. */
export abstract class RpcSession implements Session {
  /** @inheritdoc */
  readonly meta: SessionMeta;
  /**
   * @inheritdoc A live lane takes steers unless the packet forces the
   * interrupt lane (`steer_lane: resume`).
   */
  readonly acceptsInputAfterStart: boolean;
  /** @inheritdoc */
  readonly events: AsyncIterable<ProviderEvent>;
  /** @inheritdoc */
  readonly agentProcess: Promise<AgentProcessRef>;
  /** The JSON-RPC connection to the agent. */
  protected readonly rpc: JsonRpcPeer;
  /** The attempt's request. */
  protected readonly request: SessionRequest;
  /** The thread or session to resume, or `null`. */
  protected readonly resumeId: string | null;
  readonly #init: RpcSessionInit;
  readonly #process: AgentProcess;
  readonly #queue: ProviderEvent[] = [];
  #wake: (() => void) | null = null;
  #turnOver = false;
  #outputEnded = false;
  #interrupted = false;
  #started = false;
  #pidStart: string | null = null;
  #graceTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #acks = new Set<Acknowledger>();
  #version: string | null;

  /**
   * Spawns the agent.
   *
   * @throws {Deno.errors.NotFound} when the executable does not exist.
   */
  constructor(init: RpcSessionInit) {
    this.#init = init;
    this.#version = init.version;
    this.request = init.request;
    this.resumeId = init.resumeId;
    this.acceptsInputAfterStart = init.request.agent.steer_lane !== "resume";
    this.meta = {
      provider: init.name,
      session_id: init.resumeId ?? "",
      model: init.model,
    };
    this.#process = new AgentProcess({
      name: init.name,
      bin: init.bin,
      args: init.args,
      env: init.env,
      cwd: init.request.cwd,
      stdin: true,
      note: (text) => this.note(text),
      ...(init.graceMs === undefined ? {} : { graceMs: init.graceMs }),
    });
    this.agentProcess = this.#process.ref;
    this.rpc = new JsonRpcPeer(
      (line) => this.#process.write(`${line}\n`),
      {
        notification: (method, params) => {
          try {
            this.onNotification(method, params);
          } catch (error) {
            this.note(
              `[prompt_runner] unreadable ${init.name} ${method}: ${
                errorText(error)
              }`,
            );
          }
        },
        request: (method, params) => this.onRequest(method, params),
      },
    );
    this.events = this.#run();
    init.request.signal.addEventListener("abort", () => this.interrupt(), {
      once: true,
    });
  }

  /**
   * Handshake, start or resume the thread (`resumeId`), and start the first
   * turn with `request.text`. Throwing fails the attempt.
   */
  protected abstract begin(): Promise<void>;

  /** A notification from the agent. */
  protected abstract onNotification(method: string, params: unknown): void;

  /**
   * A request from the agent (an approval, a permission): answered from the
   * packet's policy, at once.
   */
  protected abstract onRequest(
    method: string,
    params: unknown,
  ): Promise<unknown> | unknown;

  /**
   * Puts a steer on the wire; `ack` is acknowledged once the agent echoes or
   * accepts it, or refused. Throwing refuses it at once.
   */
  protected abstract steer(text: string, ack: Acknowledger): Promise<void>;

  /** The protocol's own interrupt of the turn in flight. */
  protected abstract interruptTurn(): Promise<void>;

  /** The agent process's pid. */
  get pid(): number {
    return this.#process.pid;
  }

  /** Whether the runner interrupted the session. */
  protected get interrupted(): boolean {
    return this.#interrupted;
  }

  /** Whether the turn is over (the stream ends once the queue is read). */
  protected get turnOver(): boolean {
    return this.#turnOver;
  }

  /** Writes a line to the attempt's transcript. */
  protected note(text: string): void {
    this.request.note?.(text);
  }

  /** Queues canonical events (ignored once the turn is over). */
  protected emit(...events: ProviderEvent[]): void {
    if (this.#turnOver) return;
    for (const event of events) {
      if (this.#interrupted && ENDING_TYPES.has(event.type)) continue;
      if (!this.#started) this.#announce();
      this.#queue.push(event);
    }
    this.#poke();
  }

  /** The agent named its thread or session: `run_started` carries it. */
  protected setSessionId(id: string): void {
    if (!this.meta.session_id) this.meta.session_id = id;
    if (!this.#started) {
      this.#announce();
      this.#poke();
    }
  }

  /**
   * The agent named its version (an ACP agent's `initialize` answer), for
   * one whose `--version` said nothing; before the session is announced.
   */
  protected setVersion(version: string): void {
    if (version && this.#version === null) this.#version = version;
  }

  /** The agent named the model it runs. */
  protected setModel(model: string): void {
    if (model) this.meta.model = model;
  }

  /** The turn is over: the stream ends after the events already queued. */
  protected endTurn(): void {
    if (this.#turnOver) return;
    this.#turnOver = true;
    clearTimeout(this.#graceTimer);
    this.#poke();
  }

  /** Ends the turn in failure (quietly, when the runner interrupted it). */
  protected fail(failure: CliFailure): void {
    if (!this.#interrupted) {
      this.emit(...failureEvents(this.#init.name, failure));
    }
    this.endTurn();
  }

  /** @inheritdoc */
  interrupt(): void {
    if (this.#interrupted) return;
    this.#interrupted = true;
    if (this.#turnOver || this.#outputEnded) return;
    this.note(`[prompt_runner] interrupting the ${this.#init.name} turn`);
    this.interruptTurn().catch((error) =>
      this.note(
        `[prompt_runner] the ${this.#init.name} interrupt failed: ${
          errorText(error)
        }`,
      )
    );
    this.#graceTimer = setTimeout(() => {
      if (this.#turnOver || this.#outputEnded) return;
      this.#process.interrupt(
        ` (its turn had not ended ${
          this.#init.graceMs ?? INTERRUPT_GRACE_MS
        } ms after the interrupt)`,
      );
    }, this.#init.graceMs ?? INTERRUPT_GRACE_MS);
  }

  /** @inheritdoc */
  async send(text: string): Promise<SteerReceipt> {
    if (this.#turnOver || this.#interrupted || this.#outputEnded) {
      throw new TurnOverError();
    }
    const ack = new Acknowledger();
    this.#acks.add(ack);
    try {
      await this.steer(text, ack);
    } catch (error) {
      this.#acks.delete(ack);
      ack.refuse(errorText(error));
      throw error;
    }
    return ack.delivery;
  }

  /** @inheritdoc */
  async close(): Promise<void> {
    clearTimeout(this.#graceTimer);
    this.#refuseAcks("the session was closed before the agent took it");
    this.rpc.close("the session was closed");
    await this.#process.closeInput().catch(() => {});
    await this.#process.close();
  }

  #refuseAcks(reason: string): void {
    for (const ack of this.#acks) ack.refuse(reason);
    this.#acks.clear();
  }

  #announce(): void {
    this.#started = true;
    this.#queue.push(
      startedEvent(
        this.meta,
        this.#version,
        this.#process.pid,
        this.#pidStart,
      ),
    );
  }

  #poke(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  async #pump(): Promise<void> {
    const name = this.#init.name;
    const lines = this.#process.lines()[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = await Promise.race([
          lines.next(),
          this.#process.abandoned,
        ]);
        if (next === "abandoned" || next.done) break;
        const parsed = next.value;
        if (parsed.kind === "text") {
          if (parsed.reason !== "blank") {
            this.note(noteLine(name, parsed.line.text));
          }
          continue;
        }
        if (!this.rpc.receive(parsed.value)) {
          this.note(noteLine(name, parsed.line.text));
        }
      }
    } catch (error) {
      this.note(`[prompt_runner] reading ${name} failed: ${errorText(error)}`);
    } finally {
      this.#outputEnded = true;
      this.rpc.close(`the ${name} agent ended`);
      this.#poke();
    }
  }

  async *#run(): AsyncGenerator<ProviderEvent> {
    try {
      yield* this.#read();
    } finally {
      this.#refuseAcks(
        "the turn ended before the agent acknowledged the steer",
      );
    }
  }

  async *#read(): AsyncGenerator<ProviderEvent> {
    const name = this.#init.name;
    this.#pidStart = (await this.agentProcess).pid_start;
    const pump = this.#pump();
    this.begin().catch((error) => {
      if (this.#turnOver) return;
      const message = errorText(error);
      this.fail({
        kind: this.#outputEnded
          ? "transport_disconnect"
          : classifyFailure({ message }).failure_class,
        message: `the ${name} agent could not start its turn: ${message}`,
      });
    });
    for (;;) {
      while (this.#queue.length > 0) yield this.#queue.shift()!;
      if (this.#turnOver || this.#outputEnded) break;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    if (this.#turnOver) return;
    // The output ended with the turn still open: the process is gone.
    await pump;
    const exit = await this.#process.finish();
    const signalled = this.#process.signalled || this.#interrupted;
    this.note(
      `[prompt_runner] ${name} exited: ${
        exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`
      }${signalled ? " (after our interrupt)" : ""}`,
    );
    while (this.#queue.length > 0) yield this.#queue.shift()!;
    if (signalled) return;
    this.#turnOver = true;
    const failure = failureEvents(name, disconnected(name, exit));
    if (!this.#started) {
      this.#announce();
      yield this.#queue.shift()!;
    }
    yield* failure;
  }
}
