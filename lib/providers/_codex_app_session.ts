/**
 * The session of the codex app-server lane: the handshake, the turns, the
 * steers and the interrupts of one `codex app-server` process (the lane is
 * described in `codex_app_server.ts`).
 *
 * @module
 */

import { CodexAppItems, type TurnEnd } from "./_codex_app_items.ts";
import {
  approvalPolicy,
  approvalTool,
  approvalWhat,
  codexApprovalAnswer,
} from "./_codex_approvals.ts";
import { record, text } from "./_fields.ts";
import type { CliFailure } from "./cli_profile.ts";
import { JsonRpcError } from "./json_rpc.ts";
import { type Acknowledger, TurnOverError } from "./provider.ts";
import { RpcSession } from "./rpc_session.ts";
import { CARRY_ON } from "../shared/carry_on.ts";
import { errorText } from "../shared/errors.ts";
import { VERSION } from "../shared/version.ts";

/** How long the handshake's and a turn's requests may take to be answered. */
const REQUEST_TIMEOUT_MS = 60_000;

/** A steer codex has yet to echo. */
interface PendingSteer {
  acks: Acknowledger[];
  /** The text sent (the operator's words and {@linkcode CARRY_ON}). */
  text: string;
  mechanism: "turn_steer" | "turn_start";
}

/**
 * One `codex app-server` process running one attempt (`init.args` is
 * {@linkcode codexAppServerArgs}; a test may run a stand-in instead).
 */
export class CodexAppSession extends RpcSession {
  readonly #items = new CodexAppItems();
  #threadId = "";
  /** The latest turn this session started or steered into. */
  #turnId: string | null = null;
  /** Whether `#turnId` is running. */
  #open = false;
  /** How each turn of this session that ended did. */
  readonly #ends = new Map<string, TurnEnd>();
  /** How the latest turn ended, once one did. */
  #lastEnd: TurnEnd | null = null;
  /** `turn/start` and `turn/steer` requests not answered yet. */
  #inFlight = 0;
  /** Settles once the `turn/start` in flight (if any) was answered. */
  #starting: Promise<void> | null = null;
  /** Resolves once the first turn was started (or could not be). */
  readonly #ready = Promise.withResolvers<void>();
  /** Steers by the `clientUserMessageId` their echo carries. */
  readonly #pending = new Map<string, PendingSteer>();
  /** What the policy refused, in words. */
  readonly #denials: string[] = [];

  protected override async begin(): Promise<void> {
    try {
      await this.#begin();
    } finally {
      this.#ready.resolve();
    }
  }

  async #begin(): Promise<void> {
    const timeout = { timeoutMs: REQUEST_TIMEOUT_MS };
    await this.rpc.request("initialize", {
      clientInfo: { name: "prompt_runner", version: VERSION },
    }, timeout);
    await this.rpc.notify("initialized", {});
    const cwd = this.request.cwd;
    let answer: unknown;
    if (this.resumeId !== null) {
      try {
        answer = await this.rpc.request("thread/resume", {
          threadId: this.resumeId,
          cwd,
          excludeTurns: true,
        }, timeout);
      } catch (error) {
        if (!(error instanceof JsonRpcError)) throw error;
        return this.fail({
          kind: "provider_config_claim",
          message: `codex cannot resume thread "${this.resumeId}": ${
            errorText(error)
          }`,
        });
      }
    } else {
      answer = await this.rpc.request("thread/start", { cwd }, timeout);
    }
    const thread = record(answer)?.thread;
    const id = text(record(thread)?.id) ?? this.resumeId;
    if (id === null || id === "") {
      return this.fail({
        kind: "protocol_error",
        message: `codex answered thread/${
          this.resumeId === null ? "start" : "resume"
        } with no thread id: ${JSON.stringify(answer).slice(0, 300)}`,
      });
    }
    this.#threadId = id;
    this.setSessionId(id);
    const model = text(record(answer)?.model) ?? text(record(thread)?.model);
    if (model) this.setModel(model);
    if (this.interrupted) return this.endTurn();
    await this.#startTurn(this.request.text, null);
  }

  /**
   * Starts a turn on the thread; `steer`, when it carries steers, is
   * acknowledged at the turn's echo of it. Throws when codex refused.
   */
  async #startTurn(input: string, steer: PendingSteer | null): Promise<void> {
    const clientId = crypto.randomUUID();
    if (steer !== null) this.#pending.set(clientId, steer);
    this.#inFlight++;
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#starting = promise;
    try {
      const answer = await this.rpc.request("turn/start", {
        threadId: this.#threadId,
        input: [{ type: "text", text: input }],
        clientUserMessageId: clientId,
      }, { timeoutMs: REQUEST_TIMEOUT_MS });
      const id = text(record(record(answer)?.turn)?.id);
      if (id !== null) this.#began(id);
      if (this.interrupted && this.#open) {
        this.#interrupt().catch((error) =>
          this.note(
            `[prompt_runner] the codex interrupt failed: ${errorText(error)}`,
          )
        );
      }
    } catch (error) {
      this.#pending.delete(clientId);
      for (const ack of steer?.acks ?? []) {
        ack.refuse(`codex refused the new turn: ${errorText(error)}`);
      }
      throw error;
    } finally {
      this.#inFlight--;
      this.#starting = null;
      resolve();
      this.#settle();
    }
  }

  /** A turn of ours is running (or, named late, has ended already). */
  #began(turnId: string): void {
    this.#items.ownTurn(turnId);
    this.#turnId = turnId;
    const end = this.#ends.get(turnId);
    this.#open = end === undefined;
    if (end !== undefined) this.#lastEnd = end;
  }

  protected override onNotification(method: string, params: unknown): void {
    const step = this.#items.notification(method, params);
    if (step.note !== undefined) this.note(step.note);
    if (step.userMessage !== undefined) this.#echoed(step.userMessage);
    this.emit(...step.events);
    if (step.turnStarted !== undefined) {
      this.#began(step.turnStarted);
      this.#settle();
    }
    if (step.turnEnded !== undefined) {
      const { turnId, end } = step.turnEnded;
      this.#ends.set(turnId, end);
      if (turnId !== this.#turnId) {
        // An earlier turn, or one whose turn/start is still unanswered.
        this.note(`[prompt_runner] codex ended turn ${turnId} (${end.status})`);
        return;
      }
      this.#open = false;
      this.#lastEnd = end;
      this.#settle();
    }
  }

  /** A `userMessage` item: the echo of a steer, when it is one of ours. */
  #echoed(message: { clientId: string | null; text: string }): void {
    let key = message.clientId;
    if (key === null || !this.#pending.has(key)) {
      key = [...this.#pending].find(([, steer]) =>
        steer.text.trim() === message.text.trim()
      )?.[0] ?? null;
    }
    if (key === null) return;
    const steer = this.#pending.get(key)!;
    this.#pending.delete(key);
    this.note(
      `[prompt_runner] codex echoed the steer (${steer.mechanism})`,
    );
    for (const ack of steer.acks) ack.acknowledge(steer.mechanism);
  }

  /**
   * Ends the stream once no turn runs and none is being started: with the
   * last turn's outcome, or by sending again, as a new turn, the steers
   * codex accepted but never echoed before its turn completed.
   */
  #settle(): void {
    if (this.turnOver || this.#inFlight > 0 || this.#open) return;
    const end = this.#lastEnd;
    if (end === null) return;
    if (this.interrupted) return this.endTurn();
    const lost = [...this.#pending].filter(([, steer]) =>
      steer.mechanism === "turn_steer"
    );
    if (lost.length > 0 && end.status === "completed") {
      for (const [key] of lost) this.#pending.delete(key);
      const steer: PendingSteer = {
        acks: lost.flatMap(([, s]) => s.acks),
        text: lost.map(([, s]) => s.text).join("\n\n"),
        mechanism: "turn_start",
      };
      this.note(
        "[prompt_runner] the turn ended before codex took the steer: a new turn carries it",
      );
      this.#startTurn(steer.text, steer).catch((error) =>
        this.note(`[prompt_runner] codex refused the turn: ${errorText(error)}`)
      );
      return;
    }
    this.#finish(end);
  }

  #finish(end: TurnEnd): void {
    if (this.#denials.length > 0) {
      // As Claude's permission_denials: the turn did not do what the packet
      // asked (a step was refused), and another try under the same policy
      // is refused again, so the outcome is approval_denied even when codex
      // carried on and ended its turn well.
      return this.fail(this.#deniedFailure());
    }
    if (end.status === "completed") {
      this.emit({ type: "run_completed", data: { stop_reason: "end_turn" } });
      return this.endTurn();
    }
    if (end.status === "failed") return this.fail(end.failure);
    this.fail({
      kind: "user_cancelled",
      message: "codex interrupted its turn",
    });
  }

  #deniedFailure(): CliFailure {
    const policy = approvalPolicy(this.request.agent);
    return {
      kind: "approval_denied",
      message: `codex asked for approval of ${
        [...new Set(this.#denials)].join("; ")
      }, refused: approval_policy "${policy}" leaves it to a person and a run has none to ask (set agent.approval_policy: never, and agent.sandbox, to let codex act unasked)`,
    };
  }

  protected override onRequest(method: string, params: unknown): unknown {
    const answer = codexApprovalAnswer(method);
    if (answer === null) {
      throw new JsonRpcError(
        -32601,
        `Method not found: ${method} (prompt_runner answers approvals only)`,
      );
    }
    if (!answer.approval) {
      this.note(`[prompt_runner] codex asked ${method}: declined`);
      return answer.result;
    }
    const fallback = approvalTool(method, params);
    const tool = this.#items.toolOf(fallback.id) ?? fallback;
    const what = approvalWhat(tool);
    const policy = approvalPolicy(this.request.agent);
    const reason =
      `the packet's approval_policy "${policy}" leaves ${what} to a person, and a run has none to ask`;
    this.#denials.push(what);
    this.note(`[prompt_runner] refused ${method}: ${reason}`);
    this.emit(...this.#items.denied(fallback.id, { reason, tool }));
    return answer.result;
  }

  protected override async steer(
    text: string,
    ack: Acknowledger,
  ): Promise<void> {
    await this.#ready.promise;
    while (this.#starting !== null) await this.#starting;
    if (this.turnOver || this.interrupted || this.#threadId === "") {
      throw new TurnOverError();
    }
    const input = text + CARRY_ON;
    const turnId = this.#turnId;
    if (this.#open && turnId !== null) {
      const clientId = crypto.randomUUID();
      this.#pending.set(clientId, {
        acks: [ack],
        text: input,
        mechanism: "turn_steer",
      });
      this.#inFlight++;
      let refused: unknown = null;
      try {
        await this.rpc.request("turn/steer", {
          threadId: this.#threadId,
          expectedTurnId: turnId,
          input: [{ type: "text", text: input }],
          clientUserMessageId: clientId,
        }, { timeoutMs: REQUEST_TIMEOUT_MS });
        this.note(`[prompt_runner] steer: turn/steer into turn ${turnId}`);
      } catch (error) {
        this.#pending.delete(clientId);
        refused = error;
      }
      this.#inFlight--;
      if (refused === null) {
        // The turn may have ended meanwhile: settle what it left.
        return this.#settle();
      }
      if (this.turnOver || this.interrupted) {
        this.#settle();
        throw new TurnOverError();
      }
      if (!(refused instanceof JsonRpcError)) {
        this.#settle();
        throw refused;
      }
      this.note(
        `[prompt_runner] codex refused turn/steer (${refused.message}): a new turn/start on the same thread`,
      );
    }
    this.note("[prompt_runner] steer: a new turn/start on the same thread");
    await this.#startTurn(input, {
      acks: [ack],
      text: input,
      mechanism: "turn_start",
    });
  }

  protected override async interruptTurn(): Promise<void> {
    // A turn still being started is interrupted once codex names it.
    if (this.#open) await this.#interrupt();
    else this.#settle();
  }

  async #interrupt(): Promise<void> {
    if (this.#turnId === null) return;
    await this.rpc.request("turn/interrupt", {
      threadId: this.#threadId,
      turnId: this.#turnId,
    }, { timeoutMs: REQUEST_TIMEOUT_MS });
  }
}
