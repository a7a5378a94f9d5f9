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
 * - Updates become canonical events in `_acp_updates.ts`; the session is
 *   `_acp_session.ts`, its handshake `_acp_handshake.ts`, the permission
 *   policy `_acp_policy.ts` and a steer's prompt `_acp_steer_prompt.ts`.
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

import { ACP_FLAVOR, type AcpFlavor, GEMINI_FLAVOR } from "./_acp_flavors.ts";
import { AcpSession } from "./_acp_session.ts";
import { prepareAgentLaunch, spawnError } from "./cli_provider.ts";
import type {
  Provider,
  ResumeRequest,
  Session,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";

export { ACP_DEFAULT_MODEL } from "./_acp_flavors.ts";
export {
  acpAllows,
  geminiAllows,
  permissionAnswer,
  type PermissionOption,
} from "./_acp_policy.ts";
export { acpSteerPrompt } from "./_acp_steer_prompt.ts";

function createAcpProvider(flavor: AcpFlavor): Provider {
  const launch = async (
    request: SessionRequest,
    resumeId: string | null,
  ): Promise<Session> => {
    const args = flavor.args(request);
    const agent = await prepareAgentLaunch(flavor, request, {
      args,
      env: flavor.env(request),
      steerLane: "acp (a steer: session/cancel, then session/prompt)",
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
