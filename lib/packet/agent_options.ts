/**
 * A prompt's agent options: the `agent:` block of the manifest, overridden
 * key by key by the prompt's own, validated for the prompt's provider.
 *
 * @module
 */

import { refuseUnknownKeys } from "./known_keys.ts";
import { isRecord } from "../shared/is_record.ts";

/** The validated `agent:` options of a prompt. */
export interface AgentOptions {
  /** The CLI binary, or `null` for `$PROMPT_RUNNER_<PROVIDER>_BIN`, else `PATH`. */
  bin: string | null;
  /** Environment added to the runner's own for the CLI. */
  env: Record<string, string>;
  /** claude: `default | acceptEdits | plan | bypassPermissions`; amp: `default | allow_all`. */
  permission_mode: string | null;
  /** claude: `--allowedTools`. */
  allowed_tools: string[] | null;
  /** claude: `--max-turns`. */
  max_turns: number | null;
  /** Extra directories (absolute): claude/codex `--add-dir`, gemini `--include-directories`. */
  add_dirs: string[];
  /** codex: `read-only | workspace-write | danger-full-access`. */
  sandbox: string | null;
  /** codex: `-c approval_policy=…`. */
  approval_policy: string | null;
  /** codex `-c model_reasoning_effort=…`, claude `--effort`. */
  reasoning_effort: string | null;
  /** codex: extra `-c key=value` pairs. */
  config: Record<string, string | number | boolean>;
  /** gemini: `default | auto_edit | yolo | plan`. */
  approval_mode: string | null;
  /** `auto` (the provider's transport fact) or `resume` (always interrupt and resume). */
  steer_lane: "auto" | "resume";
  /**
   * How the CLI is spoken to, or `null` for the provider's default: codex
   * `app_server` (default) or `exec`; gemini `acp` (default) or `stream_json`.
   */
  transport: string | null;
  /** acp: the agent's own arguments after `bin`. */
  args: string[];
  /**
   * acp: how `session/request_permission` is answered, by the tool call's
   * ACP kind (`read`, `edit`, `delete`, `move`, `search`, `execute`,
   * `think`, `fetch`, `other`); a kind not named is denied. `null`: the
   * default, {@linkcode DEFAULT_ACP_PERMISSIONS}.
   */
  permissions: Record<string, "allow" | "deny"> | null;
}

/** The ACP tool kinds `agent.permissions` names. */
export const ACP_TOOL_KINDS: readonly string[] = [
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "other",
];

/** What an ACP agent may do unasked: read, search and think; nothing else. */
export const DEFAULT_ACP_PERMISSIONS: Readonly<
  Record<string, "allow" | "deny">
> = { read: "allow", search: "allow", think: "allow" };

/** Options with nothing set: each CLI's safe, unattended defaults apply. */
export const DEFAULT_AGENT_OPTIONS: AgentOptions = {
  bin: null,
  env: {},
  permission_mode: null,
  allowed_tools: null,
  max_turns: null,
  add_dirs: [],
  sandbox: null,
  approval_policy: null,
  reasoning_effort: null,
  config: {},
  approval_mode: null,
  steer_lane: "auto",
  transport: null,
  args: [],
  permissions: null,
};

/** The providers each key applies to (`*`: every provider). */
const APPLIES: Record<keyof AgentOptions, readonly string[]> = {
  bin: ["claude", "codex", "gemini", "amp", "acp"],
  env: ["claude", "codex", "gemini", "amp", "acp"],
  permission_mode: ["claude", "amp"],
  allowed_tools: ["claude"],
  max_turns: ["claude"],
  add_dirs: ["claude", "codex", "gemini"],
  sandbox: ["codex"],
  approval_policy: ["codex"],
  reasoning_effort: ["claude", "codex"],
  config: ["codex"],
  approval_mode: ["gemini"],
  steer_lane: ["*"],
  transport: ["codex", "gemini"],
  args: ["acp"],
  permissions: ["acp"],
};

/** The keys of `agent:`. */
export const AGENT_KEYS: readonly string[] = Object.keys(APPLIES);

/** The values a key takes, per provider where they differ. */
const CHOICES: Record<string, Record<string, readonly string[]>> = {
  permission_mode: {
    claude: ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"],
    amp: ["default", "allow_all"],
  },
  sandbox: { codex: ["read-only", "workspace-write", "danger-full-access"] },
  approval_policy: {
    codex: ["untrusted", "on-failure", "on-request", "never"],
  },
  reasoning_effort: {
    claude: ["low", "medium", "high", "xhigh", "max"],
    codex: ["minimal", "low", "medium", "high", "xhigh"],
  },
  approval_mode: { gemini: ["default", "auto_edit", "yolo", "plan"] },
  steer_lane: { "*": ["auto", "resume"] },
  transport: { codex: ["app_server", "exec"], gemini: ["acp", "stream_json"] },
};

/** One `agent:` block as written, with the file it came from. */
export interface AgentBlock {
  /** The block's keys as written. */
  raw: Record<string, unknown>;
  /** The file it is in. */
  file: string;
}

type Fail = (file: string, problem: string) => never;

/**
 * Checks an `agent:` block's shape (a mapping of known keys); values are
 * checked once the prompt's provider is known.
 *
 * @throws {UsageError} for a block that is not a mapping, or an unknown key
 * (named with the known key nearest to it).
 */
export function agentBlock(
  value: unknown,
  file: string,
  fail: Fail,
): AgentBlock | null {
  if (value === undefined || value === null) return null;
  if (!isRecord(value)) {
    fail(file, "agent must be a mapping of provider options");
  }
  refuseUnknownKeys(value, AGENT_KEYS, file, { at: "agent" });
  return { raw: value, file };
}

function text(value: unknown, key: string, file: string, fail: Fail): string {
  if (typeof value !== "string" || value.trim() === "") {
    fail(file, `agent.${key} must be a non-empty string`);
  }
  return value.trim();
}

function texts(
  value: unknown,
  key: string,
  file: string,
  fail: Fail,
): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list.map((item) => text(item, key, file, fail));
}

function scalars(
  value: unknown,
  key: string,
  file: string,
  fail: Fail,
  keyPattern: RegExp,
): Record<string, string | number | boolean> {
  if (!isRecord(value)) {
    fail(file, `agent.${key} must be a mapping`);
  }
  const out: Record<string, string | number | boolean> = {};
  for (const [name, item] of Object.entries(value)) {
    if (!keyPattern.test(name)) {
      fail(file, `agent.${key}: "${name}" is not a valid name`);
    }
    if (
      typeof item !== "string" && typeof item !== "boolean" &&
      !(typeof item === "number" && Number.isFinite(item))
    ) {
      fail(
        file,
        `agent.${key}.${name} must be a string, a number or true/false`,
      );
    }
    out[name] = item;
  }
  return out;
}

function permissionMap(
  value: unknown,
  file: string,
  fail: Fail,
): Record<string, "allow" | "deny"> {
  if (!isRecord(value)) {
    fail(
      file,
      "agent.permissions must be a mapping of ACP tool kinds to allow or deny",
    );
  }
  const out: Record<string, "allow" | "deny"> = {};
  for (const [kind, decision] of Object.entries(value)) {
    if (!ACP_TOOL_KINDS.includes(kind)) {
      fail(
        file,
        `agent.permissions: "${kind}" is not an ACP tool kind (one of ${
          ACP_TOOL_KINDS.join(", ")
        })`,
      );
    }
    if (decision !== "allow" && decision !== "deny") {
      fail(
        file,
        `agent.permissions.${kind} must be allow or deny, found ${
          JSON.stringify(decision)
        }`,
      );
    }
    out[kind] = decision;
  }
  return out;
}

/**
 * The options of a prompt: the manifest's block overridden key by key by
 * the prompt's, each value checked for `provider`. A key that does not apply
 * to the provider, or a value it does not take, is a packet error naming the
 * file the key is in.
 *
 * @param resolvePath Makes a relative path (`add_dirs`, a `bin` with a
 * slash) absolute, against the packet's directory.
 */
export function agentOptions(
  blocks: (AgentBlock | null)[],
  provider: string,
  resolvePath: (path: string) => string,
  fail: Fail,
): AgentOptions {
  const merged = new Map<string, { value: unknown; file: string }>();
  for (const block of blocks) {
    if (block === null) continue;
    for (const [key, value] of Object.entries(block.raw)) {
      merged.set(key, { value, file: block.file });
    }
  }
  const options: AgentOptions = { ...DEFAULT_AGENT_OPTIONS };
  const target = options as unknown as Record<string, unknown>;
  for (const [key, { value, file }] of merged) {
    if (value === null) continue;
    const applies = APPLIES[key as keyof AgentOptions];
    if (!applies.includes("*") && !applies.includes(provider)) {
      fail(
        file,
        `agent.${key} does not apply to provider "${provider}" (it is for ${
          applies.join(", ")
        })`,
      );
    }
    const choices = CHOICES[key]?.[provider] ?? CHOICES[key]?.["*"];
    switch (key) {
      case "bin": {
        const bin = text(value, key, file, fail);
        options.bin = bin.includes("/") ? resolvePath(bin) : bin;
        break;
      }
      case "env":
        options.env = Object.fromEntries(
          Object.entries(
            scalars(value, key, file, fail, /^[A-Za-z_][A-Za-z0-9_]*$/),
          ).map(([name, item]) => [name, String(item)]),
        );
        break;
      case "allowed_tools":
        options.allowed_tools = texts(value, key, file, fail);
        break;
      case "add_dirs":
        options.add_dirs = texts(value, key, file, fail).map(resolvePath);
        break;
      case "max_turns":
        if (
          typeof value !== "number" || !Number.isInteger(value) || value < 1
        ) {
          fail(file, `agent.max_turns must be a whole number above 0`);
        }
        options.max_turns = value;
        break;
      case "config":
        options.config = scalars(value, key, file, fail, /^[A-Za-z0-9_.-]+$/);
        break;
      case "args":
        if (!Array.isArray(value)) {
          fail(file, "agent.args must be a list of arguments");
        }
        options.args = value.map((item) => {
          if (typeof item !== "string" && typeof item !== "number") {
            fail(file, "agent.args must be a list of strings");
          }
          return String(item);
        });
        break;
      case "permissions":
        options.permissions = permissionMap(value, file, fail);
        break;
      default: {
        const chosen = text(value, key, file, fail);
        if (choices && !choices.includes(chosen)) {
          fail(
            file,
            `agent.${key} for ${provider} must be one of ${
              choices.join(", ")
            }, found "${chosen}"`,
          );
        }
        target[key] = chosen;
      }
    }
  }
  return options;
}

/**
 * Why the options cannot run as this user, or `null`: Claude refuses its
 * bypass mode as root unless `IS_SANDBOX=1` says it runs in a sandbox.
 */
export function rootRefusal(
  provider: string,
  options: AgentOptions,
  uid: number | null,
  env: Record<string, string | undefined>,
): string | null {
  if (
    provider !== "claude" || options.permission_mode !== "bypassPermissions" ||
    uid !== 0
  ) {
    return null;
  }
  if ((options.env.IS_SANDBOX ?? env.IS_SANDBOX) === "1") return null;
  return "agent.permission_mode bypassPermissions makes Claude Code run with " +
    "--permission-mode bypassPermissions, which it refuses as root; use " +
    'acceptEdits with agent.allowed_tools, or set agent.env.IS_SANDBOX: "1" ' +
    "when the run is already sandboxed";
}
