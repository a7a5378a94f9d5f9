/**
 * A prompt's agent options: the `agent:` block of the manifest, overridden
 * key by key by the prompt's own, validated for the prompt's provider.
 *
 * @module
 */

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
}

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
};
