/**
 * A packet's shape once loaded: the packet, its prompts and repos, and the
 * manifest's file name.
 *
 * @module
 */

import type { ViewSettings } from "../shared/view.ts";
import type { Contract } from "./contract.ts";
import type { RecoveryConfig } from "./recovery.ts";
import type { AgentOptions } from "./agent_options.ts";
import type { Budget } from "./budget.ts";
import type { NotifyRule } from "../shared/notify_rule.ts";

/** The manifest's fixed file name. */
export const MANIFEST_FILE = "prompt_runner_packet.md";

/** A repository a packet works in. */
export interface RepoConfig {
  /** The repo's name, used by `targets` and contract entries. */
  name: string;
  /** The repo's absolute path. */
  path: string;
  /** Whether prompts without `targets` work here. */
  default: boolean;
}

/** One prompt of a packet, with its settings resolved. */
export interface PromptSpec {
  /** The id, two digits or more (`"01"`). */
  id: string;
  /** A human name. */
  name: string;
  /** The phase number (display and selection only). */
  phase: number;
  /** The prompt file's absolute path. */
  file: string;
  /** The repos the prompt works in; the first is its working directory. */
  targets: string[];
  /** Ids of prompts that must complete first. */
  depends_on: string[];
  /** The contract from the packet (amendments are applied by the runner). */
  verify: Contract;
  /** The simulated provider's script, if any. */
  simulate: unknown;
  /** The provider that runs this prompt. */
  provider: string;
  /** The model, or `null` for the provider's default. */
  model: string | null;
  /** The recovery settings (packet settings with the prompt's overrides). */
  recovery: RecoveryConfig;
  /** The provider options: the manifest's `agent:` with the prompt's overrides. */
  agent: AgentOptions;
  /** How long one provider session may run, in milliseconds (`null`: no limit). */
  timeout_ms: number | null;
  /**
   * How long an attempt may go without a provider event before it is a
   * stall (`attention_needed {reason: stalled}`); `null`: never.
   */
  progress_timeout_ms: number | null;
  /**
   * The prompt's own spending limits (`budget:` in its front matter): they
   * replace the packet's for this prompt, key by key, and bound what the
   * prompt spends; `null`: none of its own.
   */
  budget: Budget | null;
  /** The working directory: the first target's path, else the default repo, else the packet. */
  cwd: string;
  /** The text sent to the agent: the file after its front matter. */
  body: string;
}

/** A loaded packet. */
export interface Packet {
  /** The packet directory's absolute path. */
  dir: string;
  /** The manifest's absolute path. */
  manifest_file: string;
  /** The packet's name (the directory name when the manifest has none). */
  name: string;
  /** The default provider. */
  provider: string;
  /** The default model, or `null` for the provider's default. */
  model: string | null;
  /** The repos, sorted by name. */
  repos: RepoConfig[];
  /** The packet's recovery settings. */
  recovery: RecoveryConfig;
  /** The view a run starts with. */
  view: ViewSettings;
  /** The run's spending limits (`budget:` in the manifest), or `null`. */
  budget: Budget | null;
  /** Who is told when the run needs attention or ends (`notify:`). */
  notify: NotifyRule[];
  /** The prompts, in id order. */
  prompts: PromptSpec[];
  /**
   * Things worth telling the user that do not stop a run (none today: an
   * unknown key, once a warning, is an error).
   */
  warnings: string[];
}
