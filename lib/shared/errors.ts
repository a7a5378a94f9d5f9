/**
 * The error model: one base class with a stable `code` and an `exitCode`,
 * and subclasses only for conditions a caller acts on.
 *
 * @module
 */

/**
 * The process exit codes of the CLI, documented in the README and in
 * `prompt_runner --help`.
 */
export const ExitCode = {
  /** Everything went as asked. */
  OK: 0,
  /** The run ran and failed (a prompt failed, was blocked, or was interrupted). */
  RUN_FAILED: 1,
  /** A usage error: unknown flag, bad value, missing argument, invalid packet. */
  USAGE: 2,
  /** Something named does not exist: packet, workspace, run, prompt id. */
  NOT_FOUND: 3,
  /** Refused by state: the run is not running, the ref is stale, the root is locked. */
  REFUSED: 4,
  /** A followed run ended without `run_finished` (runner gone, or superseded). */
  RUN_LOST: 5,
  /** A bug: an error nobody anticipated. */
  INTERNAL: 70,
  /** Stopped by SIGHUP (128 + 1): the terminal closed. */
  SIGHUP: 129,
  /** Stopped by SIGINT (128 + 2): Ctrl-C. */
  SIGINT: 130,
  /** Stopped by SIGTERM (128 + 15). */
  SIGTERM: 143,
} as const;

/**
 * The text of whatever was thrown: an error's message, or the value as a
 * string when something else was thrown.
 *
 * @example Usage
 * ```ts
 * import { errorText } from "./errors.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(errorText(new Error("disk full")), "disk full");
 * assert.equal(errorText("no such run"), "no such run");
 * ```
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A path cut to a readable length for a message: a 5,000-character path is
 * shown as its start and end, with its length.
 */
export function elidePath(path: string): string {
  return path.length <= 200
    ? path
    : `${path.slice(0, 100)}…${path.slice(-60)} (${path.length} characters)`;
}

/** Options for {@linkcode PromptRunnerError}. */
export interface PromptRunnerErrorOptions {
  /** A stable machine-readable code such as `"RUN_NOT_FOUND"`. */
  code: string;
  /** The exit code the CLI uses for this error. */
  exitCode: number;
  /** An optional next step for the user, printed as `hint: …`. */
  hint?: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/**
 * The base class of every error prompt_runner throws on purpose. The CLI
 * prints its message as `error: …` (and its hint as `hint: …`) and exits with
 * its `exitCode`.
 *
 * @example Usage
 * ```ts
 * import { PromptRunnerError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const error = new PromptRunnerError("Cannot read packet", {
 *   code: "PACKET_UNREADABLE",
 *   exitCode: 3,
 * });
 * assert.equal(error.exitCode, 3);
 * ```
 */
export class PromptRunnerError extends Error {
  /** A stable machine-readable code. */
  readonly code: string;
  /** The exit code the CLI uses for this error. */
  readonly exitCode: number;
  /** An optional next step for the user. */
  readonly hint: string | undefined;

  /**
   * Creates an error.
   *
   * @param message What failed, with detail after a colon.
   * @param options The code, exit code, hint and cause.
   */
  constructor(message: string, options: PromptRunnerErrorOptions) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = "PromptRunnerError";
    this.code = options.code;
    this.exitCode = options.exitCode;
    this.hint = options.hint;
  }
}

/** Options shared by the error subclasses. */
export interface ErrorDetailOptions {
  /** A stable machine-readable code; each subclass has a default. */
  code?: string;
  /** An optional next step for the user. */
  hint?: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

function detail(
  options: ErrorDetailOptions,
  code: string,
  exitCode: number,
): PromptRunnerErrorOptions {
  const result: PromptRunnerErrorOptions = {
    code: options.code ?? code,
    exitCode,
  };
  if (options.hint !== undefined) result.hint = options.hint;
  if (options.cause !== undefined) result.cause = options.cause;
  return result;
}

/**
 * A usage error (exit code 2): an unknown flag, a bad value, a missing
 * argument, or an invalid packet.
 *
 * @example Usage
 * ```ts
 * import { UsageError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new UsageError("Missing --reason").exitCode, 2);
 * ```
 */
export class UsageError extends PromptRunnerError {
  /**
   * Creates a usage error.
   *
   * @param message What is wrong with the input.
   * @param options An optional code, hint and cause.
   */
  constructor(message: string, options: ErrorDetailOptions = {}) {
    super(message, detail(options, "USAGE", ExitCode.USAGE));
    this.name = "UsageError";
  }
}

/**
 * Something named does not exist (exit code 3): a packet, a workspace, a run
 * or a prompt id.
 *
 * @example Usage
 * ```ts
 * import { NotFoundError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new NotFoundError("No run").exitCode, 3);
 * ```
 */
export class NotFoundError extends PromptRunnerError {
  /**
   * Creates a not-found error.
   *
   * @param message What was not found, and where.
   * @param options An optional code, hint and cause.
   */
  constructor(message: string, options: ErrorDetailOptions = {}) {
    super(message, detail(options, "NOT_FOUND", ExitCode.NOT_FOUND));
    this.name = "NotFoundError";
  }
}

/**
 * A request refused by state (exit code 4): the run is not running, the
 * reference is stale, or another run holds the state root.
 *
 * @example Usage
 * ```ts
 * import { StateError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new StateError("The run is not running").exitCode, 4);
 * ```
 */
export class StateError extends PromptRunnerError {
  /**
   * Creates a state error.
   *
   * @param message Why the state refuses the request.
   * @param options An optional code, hint and cause.
   */
  constructor(message: string, options: ErrorDetailOptions = {}) {
    super(message, detail(options, "REFUSED", ExitCode.REFUSED));
    this.name = "StateError";
  }
}

/**
 * A followed run ended without `run_finished` (exit code 5): its runner is
 * gone, or another run took over the state root.
 *
 * @example Usage
 * ```ts
 * import { RunLostError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * assert.equal(new RunLostError("The runner is gone").exitCode, 5);
 * ```
 */
export class RunLostError extends PromptRunnerError {
  /**
   * Creates a run-lost error.
   *
   * @param message How the run was lost.
   * @param options An optional code, hint and cause.
   */
  constructor(message: string, options: ErrorDetailOptions = {}) {
    super(message, detail(options, "RUN_LOST", ExitCode.RUN_LOST));
    this.name = "RunLostError";
  }
}

/** Options for {@linkcode LinkRefusedError}. */
export interface LinkRefusedOptions extends ErrorDetailOptions {
  /**
   * Where the link was found: inside a state root (the default), or inside
   * a packet, whose manifest, prompt directory and prompt files are read
   * (and with `--persist` written) only inside the packet.
   */
  within?: "state_root" | "packet";
}

/**
 * A path inside a private root (a state root) or a packet is a symbolic
 * link, or passes through one (exit code 4). prompt_runner never reads or
 * writes through a link there: someone who can plant one could redirect the
 * run's writes, or have a packet read (and rewrite) a file elsewhere.
 *
 * @example Usage
 * ```ts
 * import { LinkRefusedError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const error = new LinkRefusedError("/tmp/state/control/log.jsonl");
 * assert.equal(error.exitCode, 4);
 * assert.equal(error.path, "/tmp/state/control/log.jsonl");
 * ```
 */
export class LinkRefusedError extends StateError {
  /** The link that was refused. */
  readonly path: string;

  /**
   * Creates a link-refused error.
   *
   * @param path The link.
   * @param options Where it was found, an optional code, hint and cause.
   */
  constructor(path: string, options: LinkRefusedOptions = {}) {
    const packet = options.within === "packet";
    super(
      packet
        ? `Refused to use "${path}": it is a link, and prompt_runner reads a packet's manifest, prompt directory and prompt files only inside the packet, never through a link`
        : `Refused to use "${path}": it is a link (symbolic, or a hard link to a file named elsewhere), and prompt_runner never reads or writes through a link inside a state root`,
      {
        code: options.code ?? "LINK_REFUSED",
        hint: options.hint ??
          (packet
            ? "Put the file itself in the packet in place of the link (the packet directory itself may be a link)"
            : "Remove the link (a real file or directory is created in its place); state roots hold no links"),
        ...(options.cause === undefined ? {} : { cause: options.cause }),
      },
    );
    this.name = "LinkRefusedError";
    this.path = path;
  }
}

/**
 * The environment failed the run (exit code 1): a full disk, an I/O error,
 * a read-only file system. Not a bug: free space (or fix the disk) and
 * continue the run with `--resume`.
 *
 * @example Usage
 * ```ts
 * import { EnvironmentError } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const error = new EnvironmentError('Cannot write "/x/state.json": No space left on device');
 * assert.equal(error.exitCode, 1);
 * ```
 */
export class EnvironmentError extends PromptRunnerError {
  /**
   * Creates an environment error.
   *
   * @param message What could not be done, naming the path.
   * @param options An optional code, hint and cause.
   */
  constructor(message: string, options: ErrorDetailOptions = {}) {
    super(message, detail(options, "ENVIRONMENT", ExitCode.RUN_FAILED));
    this.name = "EnvironmentError";
  }
}

/** Error codes of a failing environment (disk, file system), not of a bug. */
const ENVIRONMENT_CODES = new Set([
  "ENOSPC",
  "EDQUOT",
  "EIO",
  "EROFS",
  "EFBIG",
  "EMFILE",
  "ENFILE",
]);

/**
 * Tells whether an error comes from the environment (a full disk, an I/O
 * error, a read-only file system) rather than from a bug.
 */
export function isEnvironmentError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && ENVIRONMENT_CODES.has(code)) return true;
  return /No space left on device|Disk quota exceeded|Input\/output error|Read-only file system|File too large/i
    .test(error.message);
}
