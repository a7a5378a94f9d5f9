/**
 * What the parts of the control plane share: the paths, the run, the
 * current prompt, warnings said once, the guard that moves a link planted
 * in the state root aside (never following it), and the audit log writer.
 *
 * @module
 */

import { basename } from "node:path";
import { errorText, LinkRefusedError } from "../shared/errors.ts";
import { ensurePrivateDir, moveLinkAside } from "../shared/files.ts";
import type { LinkRefusal } from "../shared/run_hooks.ts";
import { appendLogEntry, type LogEntry } from "./log_entry.ts";
import type { ControlPaths } from "./paths.ts";
import type { FaultHook } from "./_fault_steps.ts";

export type { FaultHook, FaultStep } from "./_fault_steps.ts";

let installed: FaultHook | undefined;

/**
 * Installs the hook every plane this process opens calls at each step of
 * request processing (unless its options name one). Only the tests' entry
 * (`tests/_helpers/fault_main.ts`) calls it: a production run has no way,
 * by environment or otherwise, to install one.
 */
export function installFaultHook(hook: FaultHook | undefined): void {
  installed = hook;
}

/** The hook {@linkcode installFaultHook} installed, if any. */
export function installedFaultHook(): FaultHook | undefined {
  return installed;
}

/** A key that names a kind of failure, not its instance (no temp names). */
export function errorKind(error: unknown): string {
  if (!(error instanceof Error)) return "unknown";
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error.name;
}

/** The state shared by the plane's parts. */
export class PlaneContext {
  readonly paths: ControlPaths;
  readonly #warnSink: ((message: string) => void | Promise<void>) | undefined;
  readonly fault: FaultHook | undefined;
  readonly #warned = new Set<string>();
  /** The run's id. */
  runId = "";
  /** The prompt steers go to, while one runs. */
  promptInFlight: string | null = null;
  /** The attempt the snapshot names. */
  attempt: number | null = null;

  constructor(
    paths: ControlPaths,
    warn: ((message: string) => void | Promise<void>) | undefined,
    fault: FaultHook | undefined,
  ) {
    this.paths = paths;
    this.#warnSink = warn;
    this.fault = fault;
  }

  /** The `{within}` option of every state-root file operation. */
  get within(): { within: string } {
    return { within: this.paths.root };
  }

  /** Warns once per key. */
  async warn(key: string, message: string): Promise<void> {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    try {
      await this.#warnSink?.(`control plane: ${message}`);
    } catch {
      // Warnings are best effort.
    }
  }

  /**
   * Runs file work in the state root. A link found on the way is moved
   * aside (never followed), logged and warned about once, and the work is
   * tried again; a directory found missing (`dir`) is made again.
   */
  async guard<T>(work: () => Promise<T>, dir?: string): Promise<T> {
    for (let tries = 0;; tries++) {
      try {
        return await work();
      } catch (error) {
        if (tries >= 4) throw error;
        if (error instanceof LinkRefusedError) {
          const refusal = await moveLinkAside(this.paths.root, error.path);
          if (refusal !== null) await this.linkRefused(refusal);
        } else if (
          dir !== undefined && error instanceof Deno.errors.NotFound
        ) {
          await ensurePrivateDir(dir, this.within);
        } else {
          throw error;
        }
      }
    }
  }

  /** Appends an entry to the audit log (through the guard). */
  async appendLog(entry: Omit<LogEntry, "v" | "at">): Promise<void> {
    await this.guard(
      () => appendLogEntry(this.paths, entry),
      this.paths.dir,
    );
  }

  /**
   * A link was found where the run writes, and moved aside: warned about
   * once, and logged with the reason.
   */
  async linkRefused(refusal: LinkRefusal): Promise<void> {
    const what = refusal.kind === "hard"
      ? "a hard link (a file also named somewhere else)"
      : `a symbolic link${
        refusal.target === null ? "" : ` to ${JSON.stringify(refusal.target)}`
      }`;
    const reason = `${
      JSON.stringify(refusal.path)
    } was ${what}; links in a state root are never followed, so it was moved aside to ${
      JSON.stringify(basename(refusal.moved_to))
    }`;
    await this.warn(`link:${refusal.path}`, reason);
    try {
      // Through the guard: the log itself may be the next link moved aside.
      await this.appendLog(
        this.#runnerEntry("link_refused", { ...refusal }, reason),
      );
    } catch (error) {
      await this.warn(
        `link-log:${errorKind(error)}`,
        `cannot log a refused link: ${errorText(error)}`,
      );
    }
  }

  /**
   * The runner's own file was moved away (and something, a link it seems,
   * perhaps put in its place) in the instant between the runner's check and
   * its rename: whatever was there was replaced unfollowed; this says so, as
   * for a link moved aside.
   */
  async replacedUnseen(path: string): Promise<void> {
    const reason = `${
      JSON.stringify(path)
    } was moved away by someone else as the runner rewrote it, and whatever was put in its place (a link, it seems) was replaced, never followed`;
    await this.warn(`foreign:${path}`, reason);
    try {
      await appendLogEntry(
        this.paths,
        this.#runnerEntry(
          "link_refused",
          { path, kind: "replaced", target: null, moved_to: null },
          reason,
        ),
      );
    } catch {
      // The warning stands.
    }
  }

  #runnerEntry(
    command: string,
    params: Record<string, unknown>,
    reason: string,
  ): Omit<LogEntry, "v" | "at"> {
    return {
      run_id: this.runId,
      request_id: null,
      command,
      params,
      author: "runner",
      outcome: "rejected",
      reason,
      prompt_id: this.promptInFlight,
      attempt: this.attempt,
    };
  }
}
