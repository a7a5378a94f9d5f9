/**
 * Codex's live lane, the default `agent.transport` (`app_server`):
 * `codex app-server` (0.171.0), JSON-RPC 2.0 on stdio, one process per
 * attempt. `transport: exec` is the one-shot lane in `codex.ts`.
 *
 * - Argv: `codex app-server` with the prompt's settings as `-c key=value`
 *   (`model`, `sandbox_mode` from `agent.sandbox`, default
 *   `workspace-write`, `model_reasoning_effort`, `approval_policy`, default
 *   `never`, then `agent.config`; `agent.add_dirs` become
 *   `sandbox_workspace_write.writable_roots`). The environment is the
 *   runner's: a `CODEX_HOME` that is set must exist (codex exits at once
 *   otherwise).
 * - Handshake: `initialize`, `initialized`; then `thread/start {cwd}`, or
 *   `thread/resume {threadId}` for a resume (after a failure, or on
 *   `steer_lane: resume`); then `turn/start` with the prompt.
 * - Notifications become canonical events in `_codex_app_items.ts`; the
 *   stream ends at the `turn/completed` of the last turn.
 * - A steer never restarts codex: `turn/steer {threadId, expectedTurnId,
 *   input, clientUserMessageId}` into the turn in flight, acknowledged
 *   (`turn_steer`) when the `userMessage` item that echoes it arrives
 *   (measured: when the model reply in flight ends). With no turn in flight
 *   (or when `turn/steer` is refused because the turn just ended) it is a
 *   new `turn/start` on the same thread, acknowledged (`turn_start`) at its
 *   echo; the stream stays open until that turn completes. A steer codex
 *   accepted but never echoed before its turn completed goes out again as
 *   a new turn.
 * - An interrupt (timeout, stop) is `turn/interrupt`; the core signals the
 *   process group when the turn has not ended after its grace period.
 * - Approval requests are answered at once, from the packet's policy: see
 *   {@linkcode codexApprovalAnswer}.
 *
 * @module
 */
import { codexAppServerArgs } from "./_codex_app_args.ts";
import { CodexAppSession } from "./_codex_app_session.ts";
import { codexProfile } from "./codex.ts";
import { prepareAgentLaunch, spawnError } from "./cli_provider.ts";
import type {
  Provider,
  ResumeRequest,
  Session,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";
import type { RpcSessionInit } from "./rpc_session.ts";

export { codexAppServerArgs } from "./_codex_app_args.ts";
export { codexApprovalAnswer } from "./_codex_approvals.ts";
export { CodexAppSession } from "./_codex_app_session.ts";

async function launch(
  request: SessionRequest,
  resumeId: string | null,
): Promise<Session> {
  const args = codexAppServerArgs(request);
  const live = request.agent.steer_lane !== "resume";
  const agent = await prepareAgentLaunch(codexProfile, request, {
    args,
    env: {},
    steerLane: live
      ? "send_input (codex app-server: turn/steer into the turn in flight)"
      : "interrupt_and_resume (codex app-server: turn/interrupt, then thread/resume)",
  });
  const home = agent.env.CODEX_HOME;
  if (home !== undefined && home !== "") {
    const exists = await Deno.stat(home).then(() => true, () => false);
    if (!exists) {
      throw new Error(
        `CODEX_HOME points to "${home}", which does not exist: codex would exit at once; create it or unset CODEX_HOME`,
      );
    }
  }
  const init: RpcSessionInit = {
    name: "codex",
    bin: agent.bin,
    args,
    env: agent.env,
    request,
    resumeId,
    model: request.model || codexProfile.defaultModel,
    version: agent.version,
  };
  try {
    return new CodexAppSession(init);
  } catch (error) {
    throw spawnError("codex", agent, error);
  }
}

/**
 * Codex on `codex app-server`: a new thread per attempt, `thread/resume`
 * for a resume.
 *
 * @example Usage
 * ```ts
 * import { codexAppServerProvider } from "./codex_app_server.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(codexAppServerProvider.name, "codex");
 * ```
 */
export const codexAppServerProvider: Provider = {
  name: "codex",
  defaultModel: codexProfile.defaultModel,
  start: (request: SessionRequest) => launch(request, null),
  resume: (meta: SessionMeta, request: ResumeRequest) => {
    if (!meta.session_id) {
      return Promise.reject(
        new Error(
          "codex never reported its thread id: resuming would start a fresh thread",
        ),
      );
    }
    return launch(request, meta.session_id);
  },
};
