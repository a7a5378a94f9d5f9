/**
 * The session of the ACP lane: the handshake, the prompts, the steers, the
 * permission requests and the interrupts of one ACP agent process (see
 * `acp.ts`).
 *
 * @module
 */

import { ACP_DEFAULT_MODEL, type AcpFlavor } from "./_acp_flavors.ts";
import {
  acpInitialize,
  acpOpenSession,
  field,
  rpcErrorText,
} from "./_acp_handshake.ts";
import { AcpUpdates } from "./_acp_updates.ts";
import { promptErrorFailure, stopFailure } from "./_acp_failures.ts";
import { permissionAnswer, permissionOptions } from "./_acp_policy.ts";
import { acpSteerPrompt } from "./_acp_steer_prompt.ts";
import { JsonRpcError } from "./json_rpc.ts";
import { type Acknowledger, TurnOverError } from "./provider.ts";
import { RpcSession, type RpcSessionInit } from "./rpc_session.ts";
import { CARRY_ON } from "../shared/carry_on.ts";
import { errorText } from "../shared/errors.ts";

/** How long the `_session/steering` extension may take to answer. */
const STEERING_TIMEOUT_MS = 10_000;

/** A loaded session's history is over once its updates paused this long. */
const REPLAY_QUIET_MS = 300;

/** The longest wait for a loaded session's history to end. */
const REPLAY_MAX_MS = 5000;

/** The session updates that show the agent took a prompt. */
const TAKING_UPDATES = new Set([
  "agent_message_chunk",
  "agent_thought_chunk",
  "user_message_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
]);

/** One ACP agent process running one attempt. */
export class AcpSession extends RpcSession {
  readonly #flavor: AcpFlavor;
  readonly #updates = new AcpUpdates();
  #sessionId = "";
  /** The agent offers `session/load`. */
  #canLoad = false;
  /** The agent offers the `_session/steering` extension. */
  #canInject = false;
  /** Updates are a loaded session's history, not this turn. */
  #replaying = false;
  /** When the last update of the history came. */
  #replayedAt = 0;
  /** The current prompt's number: an answer to an earlier one is moot. */
  #seq = 0;
  /** Settles once the current prompt's answer was handled. */
  #inFlight: Promise<void> = Promise.resolve();
  /** Resolves once the first prompt was sent (or the turn is over). */
  readonly #ready = Promise.withResolvers<void>();
  /** The steers so far, for the restated task. */
  readonly #steers: string[] = [];
  /** Steers whose prompt the agent has yet to take. */
  #waiting: Acknowledger[] = [];
  /** The prompt that carries `#waiting` went out. */
  #steerSent = false;
  /** What the policy refused, in words. */
  readonly #denials: string[] = [];

  constructor(
    flavor: AcpFlavor,
    init: RpcSessionInit,
  ) {
    super(init);
    this.#flavor = flavor;
  }

  protected override async begin(): Promise<void> {
    try {
      await this.#begin();
    } catch (error) {
      // The agent's own refusal (an auth error, a crash behind it): its
      // code and details say which failure it is.
      if (!(error instanceof JsonRpcError) || this.turnOver) throw error;
      this.fail({
        kind: promptErrorFailure(error).kind,
        message: `the ${this.#flavor.name} agent could not start its session: ${
          rpcErrorText(error)
        }`,
      });
    } finally {
      this.#ready.resolve();
    }
  }

  async #begin(): Promise<void> {
    const agent = await acpInitialize(this.rpc);
    this.#canLoad = agent.canLoad;
    this.#canInject = agent.canInject;
    if (agent.name !== null) {
      // An adapter's `--version` may say nothing (claude-code-acp's does not).
      this.setVersion(
        agent.version !== null ? `${agent.name} ${agent.version}` : agent.name,
      );
      this.note(
        `[prompt_runner] ACP agent ${agent.name} ${
          agent.version ?? ""
        }; loadSession ${this.#canLoad}; steering ${this.#canInject}`,
      );
    }
    // The history a loaded session replays is not shown again.
    this.#replaying = this.resumeId !== null && this.#canLoad;
    const opened = await acpOpenSession(this.rpc, {
      cwd: this.request.cwd,
      resumeId: this.resumeId,
      canLoad: this.#canLoad,
    });
    if ("failure" in opened) return this.fail(opened.failure);
    const { created } = opened;
    this.#sessionId = opened.sessionId;
    if (this.resumeId !== null) await this.#historyReplayed();
    this.setSessionId(this.#sessionId);
    const current = field(field(created, "models"), "currentModelId");
    if (typeof current === "string") this.setModel(current);
    const wanted = this.request.model;
    if (
      this.#flavor.setsModel && wanted !== null && wanted !== "" &&
      wanted !== ACP_DEFAULT_MODEL && wanted !== current
    ) {
      try {
        await this.rpc.request("session/set_model", {
          sessionId: this.#sessionId,
          modelId: wanted,
        });
        this.setModel(wanted);
      } catch (error) {
        this.fail({
          kind: "provider_config_claim",
          message: `the agent cannot use model "${wanted}": ${
            errorText(error)
          }`,
        });
        return;
      }
    }
    if (this.turnOver) return;
    this.#inFlight = this.#prompt(this.request.text, ++this.#seq);
  }

  /**
   * Waits for a loaded session's history to end: gemini streams it after
   * answering `session/load` (claude-code-acp before), and nothing marks
   * its end, so it is over once the updates paused.
   */
  async #historyReplayed(): Promise<void> {
    const deadline = Date.now() + REPLAY_MAX_MS;
    this.#replayedAt = Date.now();
    while (Date.now() < deadline && !this.turnOver) {
      const quiet = Date.now() - this.#replayedAt;
      if (quiet >= REPLAY_QUIET_MS) return;
      await new Promise((resolve) =>
        setTimeout(resolve, REPLAY_QUIET_MS - quiet)
      );
    }
  }

  protected override onNotification(method: string, params: unknown): void {
    if (method !== "session/update") {
      this.note(`[prompt_runner] ${this.#flavor.name} notification ${method}`);
      return;
    }
    const update = field(params, "update");
    const kind = field(update, "sessionUpdate");
    if (this.#replaying) {
      this.#replayedAt = Date.now();
      return;
    }
    if (
      this.#steerSent && typeof kind === "string" && TAKING_UPDATES.has(kind)
    ) {
      this.#accept();
    }
    this.emit(...this.#updates.update(params));
  }

  protected override onRequest(method: string, params: unknown): unknown {
    if (method === "session/request_permission") {
      return this.#permission(params);
    }
    // The client offered no fs and no terminal: the agent uses its own.
    throw new JsonRpcError(
      -32601,
      `Method not found: ${method} (this client offers only session/request_permission)`,
    );
  }

  #permission(params: unknown): unknown {
    const toolCall = field(params, "toolCall");
    const offered = permissionOptions(field(params, "options"));
    // A turn being interrupted takes no new tool: the answer is moot.
    if (this.turnOver || this.interrupted) {
      return { outcome: { outcome: "cancelled" } };
    }
    const kind = this.#updates.kindOf(toolCall);
    if (this.#flavor.allows(this.request.agent, kind)) {
      this.emit(...this.#updates.permissionAsked(toolCall));
      return permissionAnswer(offered, true);
    }
    const title = field(toolCall, "title");
    const what = `${kind}${typeof title === "string" ? ` "${title}"` : ""}`;
    const reason = `the packet's policy refused ${what} (${
      this.#flavor.policy(this.request.agent)
    })`;
    this.#denials.push(what);
    this.emit(...this.#updates.denied(toolCall, reason));
    this.note(`[prompt_runner] refused permission: ${reason}`);
    return permissionAnswer(offered, false);
  }

  #accept(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    this.#steerSent = false;
    for (const ack of waiting) ack.acknowledge("acp_prompt");
  }

  #refuseWaiting(reason: string): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    this.#steerSent = false;
    for (const ack of waiting) ack.refuse(reason);
  }

  /** Sends a prompt and handles its answer, unless a steer superseded it. */
  async #prompt(text: string, seq: number): Promise<void> {
    if (this.#waiting.length > 0) this.#steerSent = true;
    this.#replaying = false;
    let response: unknown;
    try {
      response = await this.rpc.request("session/prompt", {
        sessionId: this.#sessionId,
        prompt: [{ type: "text", text }],
      });
    } catch (error) {
      if (seq !== this.#seq) {
        this.note(
          `[prompt_runner] the prompt a steer cancelled ended in an error: ${
            errorText(error)
          }`,
        );
        return;
      }
      this.#refuseWaiting(
        `the agent refused the steer's prompt: ${errorText(error)}`,
      );
      this.emit(...this.#updates.flush());
      if (this.interrupted) return this.endTurn();
      this.fail(
        this.#denials.length > 0
          ? this.#denied()
          : error instanceof JsonRpcError
          ? promptErrorFailure(error)
          : { kind: "transport_disconnect", message: errorText(error) },
      );
      return;
    }
    // An answer with no update before it still took the prompt.
    if (seq === this.#seq && this.#steerSent) this.#accept();
    this.emit(...this.#updates.promptEnded(response));
    if (seq !== this.#seq) return;
    const stop = field(response, "stopReason");
    if (this.interrupted) return this.endTurn();
    if (this.#denials.length > 0) return this.fail(this.#denied());
    const failure = stopFailure(stop);
    if (failure !== null) return this.fail(failure);
    this.emit({ type: "run_completed", data: { stop_reason: "end_turn" } });
    this.endTurn();
  }

  #denied(): { kind: string; message: string } {
    return {
      kind: "approval_denied",
      message:
        `the packet's policy refused ${this.#denials.length} permission request(s): ${
          [...new Set(this.#denials)].join(", ")
        } (${this.#flavor.policy(this.request.agent)})`,
    };
  }

  protected override async steer(
    text: string,
    ack: Acknowledger,
  ): Promise<void> {
    await this.#ready.promise;
    if (this.turnOver || this.#sessionId === "") {
      throw new TurnOverError();
    }
    this.#steers.push(text);
    if (this.#canInject && await this.#inject(text, ack)) return;
    // Only the prompt that carries this steer can take it (and the steers
    // still waiting, which it restates too).
    this.#steerSent = false;
    this.#waiting.push(ack);
    const seq = ++this.#seq;
    const previous = this.#inFlight;
    await this.rpc.notify("session/cancel", { sessionId: this.#sessionId });
    this.note(
      `[prompt_runner] steer: session/cancel, then a session/prompt restating the task`,
    );
    this.#inFlight = previous.then(() => {
      // A later steer sends the prompt that carries this one too.
      if (seq !== this.#seq) return;
      if (this.interrupted || this.turnOver) {
        this.#refuseWaiting("the turn was interrupted before the steer");
        this.endTurn();
        return;
      }
      const restated = acpSteerPrompt(
        this.request.text,
        this.#updates.progress(),
        this.#steers,
        { cwd: this.request.cwd },
      );
      return this.#prompt(restated, seq);
    });
  }

  /** The `_session/steering` extension; false when it did not inject. */
  async #inject(text: string, ack: Acknowledger): Promise<boolean> {
    try {
      const answer = await this.rpc.request("_session/steering", {
        sessionId: this.#sessionId,
        prompt: [{ type: "text", text: text + CARRY_ON }],
        _meta: { steering: { idleBehavior: "promptRequired" } },
      }, { timeoutMs: STEERING_TIMEOUT_MS });
      const outcome = field(answer, "outcome");
      if (outcome === "injected") {
        ack.acknowledge("acp_steering");
        return true;
      }
      this.note(
        `[prompt_runner] _session/steering answered ${
          JSON.stringify(outcome ?? null)
        }: cancelling and prompting instead`,
      );
    } catch (error) {
      this.note(
        `[prompt_runner] _session/steering failed (${
          errorText(error)
        }): cancelling and prompting instead`,
      );
    }
    return false;
  }

  protected override async interruptTurn(): Promise<void> {
    if (this.#sessionId === "") return;
    await this.rpc.notify("session/cancel", { sessionId: this.#sessionId });
  }
}
