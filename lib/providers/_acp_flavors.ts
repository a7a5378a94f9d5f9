/**
 * What differs between the ACP lane's two providers: `gemini` on
 * `gemini --acp` and `acp`, any ACP agent.
 *
 * @module
 */

import { acpAllows, geminiAllows } from "./_acp_policy.ts";
import { GEMINI_DEFAULT_MODEL, geminiProfile } from "./gemini.ts";
import type { SessionRequest } from "./provider.ts";
import {
  type AgentOptions,
  DEFAULT_ACP_PERMISSIONS,
} from "../packet/agent_options.ts";

/** The model the `acp` provider names when the packet names none. */
export const ACP_DEFAULT_MODEL = "default";

/** What differs between the gemini and acp providers. */
export interface AcpFlavor {
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

/** The `gemini` provider on `gemini --acp`. */
export const GEMINI_FLAVOR: AcpFlavor = {
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

/** The `acp` provider: `agent.bin` with `agent.args`. */
export const ACP_FLAVOR: AcpFlavor = {
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
