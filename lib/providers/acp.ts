/**
 * The ACP live lane (Agent Client Protocol: JSON-RPC 2.0 over stdio), for
 * two providers: `gemini` on `gemini --acp` (its default transport) and
 * `acp`, any ACP agent (`agent.bin` plus `agent.args`, e.g.
 * `claude-code-acp`).
 *
 * - Handshake: `initialize {protocolVersion: 1, clientCapabilities: {fs:
 *   {readTextFile: false, writeTextFile: false}, terminal: false}}` (the
 *   client offers nothing it does not implement: the agent reads, writes
 *   and runs commands itself), then `session/new {cwd, mcpServers: []}`;
 *   `session/prompt {sessionId, prompt: [{type: "text", text}]}` stays open
 *   for the whole turn and answers its `stopReason`. A resume (after a
 *   failure, or on `steer_lane: resume`) is `session/load` when the
 *   agent's `initialize` answer offers `loadSession` (the history it
 *   replays is not shown again), else a `provider_config_claim`. Measured:
 *   claude-code-acp loads its sessions; gemini 0.61.0 cannot load one it
 *   made over ACP (its load rewrites the session's record before reading
 *   it: "No previous sessions found for this project"), so a failed gemini
 *   turn is retried afresh rather than resumed.
 * - Updates become canonical events in `_acp_updates.ts`.
 * - `session/request_permission` is answered at once from the packet's
 *   policy: gemini by `agent.approval_mode`, acp by `agent.permissions`
 *   (ACP tool kind → allow | deny). A refusal fails the call as
 *   `approval_denied`, and the turn ends as `approval_denied` whether the
 *   agent carries on (gemini) or ends the prompt with an error
 *   (claude-code-acp, -32603).
 * - A steer never restarts the agent. When the agent advertises the
 *   `_session/steering` extension (`_meta.steering.supported` in its
 *   `initialize` answer) the steer is injected into the running turn
 *   (mechanism `acp_steering`). Otherwise: `session/cancel`, wait for the
 *   prompt to answer `cancelled`, then `session/prompt` on the same session
 *   with a text that restates the task, what the session saw done so far
 *   and every steer so far, then {@linkcode CARRY_ON}: gemini drops a
 *   cancelled prompt from its history (measured), so the steer's prompt
 *   must carry the task. The steer is acknowledged (`acp_prompt`) at the
 *   first update after that prompt went out, or at its answer.
 * - An interrupt (timeout, stop) is `session/cancel`; the core then signals
 *   the process group if the turn has not ended.
 * - gemini runs as `gemini --acp --skip-trust -m <model>` plus
 *   `--approval-mode` and `--include-directories` as on its stream_json
 *   lane; `acp` runs `agent.bin` with `agent.args`, and a packet's model
 *   other than `default` is asked for with `session/set_model`.
 *
 * @module
 */

import { AcpUpdates, promptErrorFailure, stopFailure } from "./_acp_updates.ts";
import type { AcpProgress } from "./_acp_updates.ts";
import { prepareAgentLaunch, spawnError } from "./cli_provider.ts";
import { GEMINI_DEFAULT_MODEL, geminiProfile } from "./gemini.ts";
import { JsonRpcError } from "./json_rpc.ts";
import type {
  Acknowledger,
  Provider,
  ResumeRequest,
  Session,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";
import { RpcSession, type RpcSessionInit } from "./rpc_session.ts";
import {
  type AgentOptions,
  DEFAULT_ACP_PERMISSIONS,
} from "../packet/agent_options.ts";
import { CARRY_ON } from "../shared/carry_on.ts";
import { errorText } from "../shared/errors.ts";
import { isRecord } from "../shared/is_record.ts";

/** The model the `acp` provider names when the packet names none. */
export const ACP_DEFAULT_MODEL = "default";

/** How long the `_session/steering` extension may take to answer. */
const STEERING_TIMEOUT_MS = 10_000;

/** A loaded session's history is over once its updates paused this long. */
const REPLAY_QUIET_MS = 300;

/** The longest wait for a loaded session's history to end. */
const REPLAY_MAX_MS = 5000;

/** The most tool calls a restated task lists (the latest ones). */
const RESTATED_TOOLS = 30;

/** The longest last message a restated task quotes. */
const RESTATED_MESSAGE_CHARS = 600;

/** The session updates that show the agent took a prompt. */
const TAKING_UPDATES = new Set([
  "agent_message_chunk",
  "agent_thought_chunk",
  "user_message_chunk",
  "tool_call",
  "tool_call_update",
  "plan",
]);

/** An offered permission option. */
export interface PermissionOption {
  /** `allow_once`, `allow_always`, `reject_once` or `reject_always`. */
  kind: string;
  /** What to answer to pick it. */
  optionId: string;
}

/**
 * Whether gemini's `agent.approval_mode` allows a tool of ACP kind `kind`,
 * by gemini's own semantics: reads, searches and thoughts are never asked
 * about in any mode; `auto_edit` adds edits (and deletes, moves); `yolo`
 * allows everything; `default` (or none) and `plan` refuse the rest.
 *
 * @example Usage
 * ```ts
 * import { geminiAllows } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(geminiAllows("auto_edit", "edit"), true);
 * assert.equal(geminiAllows("auto_edit", "execute"), false);
 * assert.equal(geminiAllows(null, "read"), true);
 * ```
 */
export function geminiAllows(mode: string | null, kind: string): boolean {
  if (mode === "yolo") return true;
  if (["read", "search", "think"].includes(kind)) return true;
  return mode === "auto_edit" && ["edit", "delete", "move"].includes(kind);
}

/**
 * Whether `agent.permissions` (else {@linkcode DEFAULT_ACP_PERMISSIONS})
 * allows a tool of ACP kind `kind`: a kind not named is denied.
 *
 * @example Usage
 * ```ts
 * import { acpAllows } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(acpAllows(null, "read"), true);
 * assert.equal(acpAllows(null, "edit"), false);
 * assert.equal(acpAllows({ edit: "allow" }, "edit"), true);
 * assert.equal(acpAllows({ edit: "allow" }, "read"), false);
 * ```
 */
export function acpAllows(
  permissions: Record<string, "allow" | "deny"> | null,
  kind: string,
): boolean {
  return (permissions ?? DEFAULT_ACP_PERMISSIONS)[kind] === "allow";
}

/**
 * The answer to `session/request_permission`: the offered option that
 * allows once (else always) when `allow`, else the one that rejects once
 * (else always); `cancelled` when no option fits.
 *
 * @example Usage
 * ```ts
 * import { permissionAnswer } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * const options = [
 *   { optionId: "proceed_always", kind: "allow_always" },
 *   { optionId: "proceed_once", kind: "allow_once" },
 *   { optionId: "cancel", kind: "reject_once" },
 * ];
 * assert.deepEqual(permissionAnswer(options, false), {
 *   outcome: { outcome: "selected", optionId: "cancel" },
 * });
 * ```
 */
export function permissionAnswer(
  options: readonly PermissionOption[],
  allow: boolean,
): {
  outcome: { outcome: "selected"; optionId: string } | { outcome: "cancelled" };
} {
  const order = allow
    ? ["allow_once", "allow_always"]
    : ["reject_once", "reject_always"];
  for (const kind of order) {
    const option = options.find((o) => o.kind === kind);
    if (option) {
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    }
  }
  return { outcome: { outcome: "cancelled" } };
}

function relative(path: string, cwd: string): string {
  const root = cwd.endsWith("/") ? cwd : `${cwd}/`;
  return path.startsWith(root) ? path.slice(root.length) : path;
}

/**
 * The text of a steer's `session/prompt`: the task restated, what the
 * session saw done so far, the earlier steers still in force, the new
 * steer, and {@linkcode CARRY_ON}. An agent that dropped the cancelled
 * prompt from its history (gemini) learns the task again from it; one that
 * kept it (claude-code-acp) reads it as a reminder.
 *
 * @param task The attempt's prompt text.
 * @param progress What the session saw done (`AcpUpdates.progress()`).
 * @param steers Every steer so far, the newest last.
 * @param options `cwd`: paths under it are shown relative to it.
 *
 * @example Usage
 * ```ts
 * import { acpSteerPrompt } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * const text = acpSteerPrompt("Write a.txt.", {
 *   tools: [{ kind: "edit", title: "Writing to a.txt", paths: ["/w/a.txt"], status: "completed" }],
 *   last_message: "Writing a.",
 * }, ["Also write b.txt."], { cwd: "/w" });
 * assert.match(text, /Write a\.txt\./);
 * assert.match(text, /edit a\.txt/);
 * assert.match(text, /Also write b\.txt\./);
 * ```
 */
export function acpSteerPrompt(
  task: string,
  progress: AcpProgress,
  steers: readonly string[],
  options: { cwd: string },
): string {
  const lines = [
    "You were working on the task below when the operator stopped your " +
    "last turn to correct it. What that turn already did to the files is " +
    "still there.",
    "",
    "<task>",
    task.trim(),
    "</task>",
    "",
  ];
  const tools = progress.tools.slice(-RESTATED_TOOLS);
  if (tools.length > 0 || progress.last_message) {
    lines.push("What was done so far:");
    if (progress.tools.length > tools.length) {
      lines.push(
        `- (${progress.tools.length - tools.length} earlier tool calls)`,
      );
    }
    for (const tool of tools) {
      const paths = tool.paths.map((path) => relative(path, options.cwd));
      const what = [tool.kind, ...paths].join(" ");
      const title = tool.title && !paths.some((p) => tool.title === p)
        ? `: ${tool.title.replace(/\s+/g, " ").slice(0, 200)}`
        : "";
      lines.push(`- ${what}${title} (${tool.status})`);
    }
    if (progress.last_message) {
      const message = progress.last_message.trim().replace(/\s+/g, " ");
      lines.push(
        `- Your last message: "${
          message.length > RESTATED_MESSAGE_CHARS
            ? `${message.slice(0, RESTATED_MESSAGE_CHARS)}…`
            : message
        }"`,
      );
    }
    lines.push("");
  }
  const earlier = steers.slice(0, -1);
  if (earlier.length > 0) {
    lines.push("Earlier steers from the operator, still in force:");
    for (const steer of earlier) lines.push(`- ${steer.trim()}`);
    lines.push("");
  }
  lines.push("The operator's steer:", (steers.at(-1) ?? "").trim());
  return lines.join("\n") + CARRY_ON;
}

/** What differs between the gemini and acp providers. */
interface AcpFlavor {
  /** The provider's name. */
  name: string;
  /** The binary's name on `PATH`, or `null` (acp: only `agent.bin`). */
  binName: string | null;
  /** The model shown when the packet names none. */
  defaultModel: string;
  /** The agent's arguments. */
  args(request: SessionRequest): string[];
  /** Environment the agent needs on top of the runner's and `agent.env`. */
  env(request: SessionRequest): Record<string, string>;
  /** Whether the packet's policy allows a tool of ACP kind `kind`. */
  allows(options: AgentOptions, kind: string): boolean;
  /** The policy, in words, for a refusal's message. */
  policy(options: AgentOptions): string;
  /** Whether to ask the agent for `request.model` with `session/set_model`. */
  setsModel: boolean;
}

const GEMINI_FLAVOR: AcpFlavor = {
  name: "gemini",
  binName: "gemini",
  defaultModel: GEMINI_DEFAULT_MODEL,
  args(request: SessionRequest): string[] {
    const options = request.agent;
    const args = [
      "--acp",
      "--skip-trust",
      "-m",
      request.model !== null && request.model !== ""
        ? request.model
        : GEMINI_DEFAULT_MODEL,
    ];
    if (options.approval_mode !== null) {
      args.push("--approval-mode", options.approval_mode);
    }
    for (const dir of options.add_dirs) args.push("--include-directories", dir);
    return [...args, ...options.args];
  },
  env(request: SessionRequest): Record<string, string> {
    return geminiProfile.env?.({
      text: request.text,
      cwd: request.cwd,
      model: request.model,
      options: request.agent,
      liveInput: true,
    }) ?? {};
  },
  allows(options: AgentOptions, kind: string): boolean {
    return geminiAllows(options.approval_mode, kind);
  },
  policy(options: AgentOptions): string {
    return `agent.approval_mode is ${options.approval_mode ?? "default"}`;
  },
  setsModel: false,
};

const ACP_FLAVOR: AcpFlavor = {
  name: "acp",
  binName: null,
  defaultModel: ACP_DEFAULT_MODEL,
  args(request: SessionRequest): string[] {
    return [...request.agent.args];
  },
  env(): Record<string, string> {
    return {};
  },
  allows(options: AgentOptions, kind: string): boolean {
    return acpAllows(options.permissions, kind);
  },
  policy(options: AgentOptions): string {
    const permissions = options.permissions ?? DEFAULT_ACP_PERMISSIONS;
    const allowed = Object.keys(permissions).filter((kind) =>
      permissions[kind] === "allow"
    );
    return `agent.permissions allows ${
      allowed.length > 0 ? allowed.join(", ") : "nothing"
    }`;
  },
  setsModel: true,
};

/** A JSON-RPC error answer in words: its message, and its data if any. */
function rpcErrorText(error: JsonRpcError): string {
  return `${error.message}${
    error.data === undefined
      ? ""
      : ` (${JSON.stringify(error.data).slice(0, 300)})`
  }`;
}

function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

function options(value: unknown): PermissionOption[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).flatMap((option) =>
    typeof option.kind === "string" && typeof option.optionId === "string"
      ? [{ kind: option.kind, optionId: option.optionId }]
      : []
  );
}

/** One ACP agent process running one attempt. */
class AcpSession extends RpcSession {
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
    const init = await this.rpc.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
      },
    });
    const capabilities = field(init, "agentCapabilities");
    this.#canLoad = field(capabilities, "loadSession") === true;
    this.#canInject =
      field(field(field(init, "_meta"), "steering"), "supported") === true;
    const version = field(field(init, "agentInfo"), "version");
    const agent = field(field(init, "agentInfo"), "name");
    if (typeof agent === "string") {
      // An adapter's `--version` may say nothing (claude-code-acp's does not).
      this.setVersion(
        typeof version === "string" ? `${agent} ${version}` : agent,
      );
      this.note(
        `[prompt_runner] ACP agent ${agent} ${
          typeof version === "string" ? version : ""
        }; loadSession ${this.#canLoad}; steering ${this.#canInject}`,
      );
    }
    const cwd = this.request.cwd;
    let created: unknown;
    if (this.resumeId !== null) {
      if (!this.#canLoad) {
        this.fail({
          kind: "provider_config_claim",
          message:
            `the agent cannot load a session: its initialize answer does not offer loadSession, so session "${this.resumeId}" cannot be resumed`,
        });
        return;
      }
      this.#replaying = true;
      try {
        created = await this.rpc.request("session/load", {
          sessionId: this.resumeId,
          cwd,
          mcpServers: [],
        });
      } catch (error) {
        if (!(error instanceof JsonRpcError)) throw error;
        this.fail({
          kind: "provider_config_claim",
          message: `the agent could not load session "${this.resumeId}": ${
            rpcErrorText(error)
          }`,
        });
        return;
      }
      this.#sessionId = this.resumeId;
      await this.#historyReplayed();
    } else {
      created = await this.rpc.request("session/new", { cwd, mcpServers: [] });
      const id = field(created, "sessionId");
      if (typeof id !== "string" || id === "") {
        this.fail({
          kind: "protocol_error",
          message: `session/new answered no sessionId: ${
            JSON.stringify(created).slice(0, 300)
          }`,
        });
        return;
      }
      this.#sessionId = id;
    }
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
    const offered = options(field(params, "options"));
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
      throw new Error("the turn is over");
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

function createAcpProvider(flavor: AcpFlavor): Provider {
  const launch = async (
    request: SessionRequest,
    resumeId: string | null,
  ): Promise<Session> => {
    const args = flavor.args(request);
    const agent = await prepareAgentLaunch(flavor, request, {
      args,
      env: flavor.env(request),
      lane: "acp (a steer: session/cancel, then session/prompt)",
    });
    try {
      return new AcpSession(flavor, {
        name: flavor.name,
        bin: agent.bin,
        args,
        env: agent.env,
        request,
        resumeId,
        model: request.model !== null && request.model !== ""
          ? request.model
          : flavor.defaultModel,
        version: agent.version,
      });
    } catch (error) {
      throw spawnError(flavor.name, agent, error);
    }
  };
  return {
    name: flavor.name,
    defaultModel: flavor.defaultModel,
    start: (request: SessionRequest) => launch(request, null),
    resume: (meta: SessionMeta, request: ResumeRequest) => {
      if (!meta.session_id) {
        return Promise.reject(
          new Error(`the ${flavor.name} session has no id to load`),
        );
      }
      return launch(request, meta.session_id);
    },
  };
}

/**
 * Gemini CLI on its ACP lane (`gemini --acp`, the default
 * `agent.transport`); `transport: stream_json` is `gemini.ts`.
 *
 * @example Usage
 * ```ts
 * import { geminiAcpProvider } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(geminiAcpProvider.name, "gemini");
 * ```
 */
export const geminiAcpProvider: Provider = createAcpProvider(GEMINI_FLAVOR);

/**
 * Any ACP agent: `agent.bin` (else `$PROMPT_RUNNER_ACP_BIN`) with
 * `agent.args`; permissions by `agent.permissions`.
 *
 * @example Usage
 * ```ts
 * import { acpProvider } from "./acp.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(acpProvider.name, "acp");
 * assert.equal(acpProvider.defaultModel, "default");
 * ```
 */
export const acpProvider: Provider = createAcpProvider(ACP_FLAVOR);
