/**
 * The ACP lane's handshake: `initialize` (what the agent offers), then
 * `session/new`, or `session/load` for a resume.
 *
 * @module
 */

import type { CliFailure } from "./cli_profile.ts";
import { JsonRpcError, type JsonRpcPeer } from "./json_rpc.ts";
import { isRecord } from "../shared/is_record.ts";

/** What an agent's `initialize` answer says about it. */
export interface AcpAgentInfo {
  /** The agent offers `session/load`. */
  canLoad: boolean;
  /** The agent offers the `_session/steering` extension. */
  canInject: boolean;
  /** Its `agentInfo.name`, or `null`. */
  name: string | null;
  /** Its `agentInfo.version`, or `null`. */
  version: string | null;
}

/** An opened session: its id and the answer that opened it. */
export interface AcpOpened {
  /** The session's id. */
  sessionId: string;
  /** The `session/new` or `session/load` answer. */
  created: unknown;
}

/** A JSON-RPC error answer in words: its message, and its data if any. */
export function rpcErrorText(error: JsonRpcError): string {
  return `${error.message}${
    error.data === undefined
      ? ""
      : ` (${JSON.stringify(error.data).slice(0, 300)})`
  }`;
}

/** An object's field `key`, or `undefined` (hostile input). */
export function field(value: unknown, key: string): unknown {
  return isRecord(value) ? value[key] : undefined;
}

/** Sends `initialize` (the client offers no fs and no terminal). */
export async function acpInitialize(rpc: JsonRpcPeer): Promise<AcpAgentInfo> {
  const init = await rpc.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
    },
  });
  const capabilities = field(init, "agentCapabilities");
  const version = field(field(init, "agentInfo"), "version");
  const agent = field(field(init, "agentInfo"), "name");
  return {
    canLoad: field(capabilities, "loadSession") === true,
    canInject:
      field(field(field(init, "_meta"), "steering"), "supported") === true,
    name: typeof agent === "string" ? agent : null,
    version: typeof version === "string" ? version : null,
  };
}

/**
 * Opens the session: `session/load` of `resumeId` when there is one (which
 * needs `canLoad`), else `session/new`; the failure when it cannot.
 */
export async function acpOpenSession(
  rpc: JsonRpcPeer,
  options: { cwd: string; resumeId: string | null; canLoad: boolean },
): Promise<AcpOpened | { failure: CliFailure }> {
  const { cwd, resumeId } = options;
  if (resumeId !== null) {
    if (!options.canLoad) {
      return {
        failure: {
          kind: "provider_config_claim",
          message:
            `the agent cannot load a session: its initialize answer does not offer loadSession, so session "${resumeId}" cannot be resumed`,
        },
      };
    }
    try {
      const created = await rpc.request("session/load", {
        sessionId: resumeId,
        cwd,
        mcpServers: [],
      });
      return { sessionId: resumeId, created };
    } catch (error) {
      if (!(error instanceof JsonRpcError)) throw error;
      return {
        failure: {
          kind: "provider_config_claim",
          message: `the agent could not load session "${resumeId}": ${
            rpcErrorText(error)
          }`,
        },
      };
    }
  }
  const created = await rpc.request("session/new", { cwd, mcpServers: [] });
  const id = field(created, "sessionId");
  if (typeof id !== "string" || id === "") {
    return {
      failure: {
        kind: "protocol_error",
        message: `session/new answered no sessionId: ${
          JSON.stringify(created).slice(0, 300)
        }`,
      },
    };
  }
  return { sessionId: id, created };
}
