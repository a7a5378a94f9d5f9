/**
 * Control requests: files a client drops into `requests/` for the runner to
 * consume at its next event boundary, and what became of them.
 *
 * A request the client acknowledges gets exactly one receipt and one final
 * log entry. The runner publishes its final status before its last sweep of
 * `requests/`, so a client that still sees the run running after its
 * request is durable can rely on the runner; one that sees the run ended
 * claims its request back and settles it itself (the receipt, published
 * without replacing one, decides who settles).
 *
 * @module
 */

import { StateError, UsageError } from "../shared/errors.ts";
import { currentUid } from "../shared/files.ts";
import { newId } from "../shared/new_id.ts";
import { readRunLock } from "../shared/run_lock.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import {
  readStateRootSnapshot,
  type Snapshot,
  snapshotOfRun,
} from "./snapshot.ts";
import { MAX_REQUEST_BYTES } from "./_request_files.ts";
import { placeRequest } from "./place_request.ts";

export { MAX_REQUEST_BYTES };

/** A request file's content. */
export interface ControlRequest {
  /** The schema version. */
  v: 1;
  /** The request's id, which sorts by time; also its file name. */
  id: string;
  /** `set_view` or `steer`. */
  command: string;
  /** The command's parameters. */
  params: Record<string, unknown>;
  /** The run the request is for. */
  run_id: string;
  /** Who asks (self-declared). */
  author: string;
  /** When the client wrote it. */
  issued_at: string;
  /** The prompt a steer is for, when the client names one. */
  prompt_id?: string;
}

/**
 * What a client gets back once its request is durable (not to be confused
 * with the plane's {@linkcode Receipt} of a decided request).
 */
export interface SentRequest {
  /** The request's id: find its outcome with `requestOutcome` or `control log`. */
  request_id: string;
  /** The run it was sent to. */
  run_id: string;
}

/** Options shared by the request-writing client calls. */
export interface RequestOptions {
  /** Who asks; `$USER`, else the account name, else `uid:N` when absent. */
  author?: string;
}

/** The account name of a uid from `/etc/passwd`, or `null`. */
async function accountName(uid: number): Promise<string | null> {
  try {
    const passwd = await Deno.readTextFile("/etc/passwd");
    for (const line of passwd.split("\n")) {
      const fields = line.split(":");
      if (fields[2] === String(uid) && fields[0]) return fields[0];
    }
  } catch {
    // No passwd file, or no permission to read it.
  }
  return null;
}

function envUser(): string | undefined {
  try {
    return Deno.env.get("USER") || Deno.env.get("LOGNAME") ||
      Deno.env.get("USERNAME") || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The author to record: the given one, else `$USER` (or `$LOGNAME`, or
 * `$USERNAME`), else the account name of the process from `/etc/passwd`
 * (containers and cron often set no `$USER`), else `uid:N`, and `unknown`
 * only when none can be read. The CLI's control commands and the
 * dashboard's web actions name their authors this way.
 *
 * Needs `--allow-env` for the variables, `--allow-sys=uid` and read access
 * to `/etc/passwd` for the account; without them it falls further down the
 * chain rather than throw.
 *
 * @example The given name wins, trimmed
 * ```ts
 * import { defaultAuthor } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(await defaultAuthor("  ada "), "ada");
 * assert.notEqual(await defaultAuthor(), "");
 * ```
 *
 * @param author The author a caller names, if any.
 * @returns The name to record.
 */
export async function defaultAuthor(author?: string): Promise<string> {
  if (author !== undefined && author.trim() !== "") return author.trim();
  const user = envUser();
  if (user) return user;
  const uid = currentUid();
  if (uid === null) return "unknown";
  return (await accountName(uid)) ?? `uid:${uid}`;
}

/**
 * Checks that a run is live: it is the state root's current run, its
 * snapshot says running, and its runner process still holds the lock.
 *
 * @throws {StateError} naming the run's status when it is not running.
 */
export async function requireRunning(ref: RunRef): Promise<Snapshot> {
  const current = snapshotOfRun(
    await readStateRootSnapshot(ref.state_root),
    ref,
  );
  if (current.status !== "running") {
    throw new StateError(
      `Run ${ref.run_id} is ${current.status}, not running`,
      {
        code: "RUN_NOT_RUNNING",
        // A fresh run would do the completed prompts again: continue this one.
        hint: current.status === "interrupted"
          ? "Requests only reach a live run; continue this one with 'prompt_runner run PACKET --resume'"
          : "Requests only reach a live run; start one with 'prompt_runner run'",
      },
    );
  }
  const lock = await readRunLock(ref.state_root);
  if (lock === null || !lock.alive || lock.info?.run_id !== ref.run_id) {
    throw new StateError(
      `Run ${ref.run_id} is not running: its runner${
        current.pid ? ` (pid ${current.pid})` : ""
      } is gone`,
      {
        code: "RUN_GONE",
        hint: "Resume it with 'prompt_runner run PACKET --resume'",
      },
    );
  }
  return current;
}

/**
 * Makes a request for a run, as every transport sends it: a new id, the
 * author, the time, and its JSON line.
 *
 * @throws {UsageError} when the request is larger than {@linkcode MAX_REQUEST_BYTES}.
 */
export async function newRequest(
  ref: RunRef,
  command: string,
  params: Record<string, unknown>,
  options: RequestOptions & { prompt_id?: string } = {},
): Promise<{ request: ControlRequest; text: string }> {
  const request: ControlRequest = {
    v: 1,
    id: newId(),
    command,
    params,
    run_id: ref.run_id,
    author: await defaultAuthor(options.author),
    issued_at: new Date().toISOString(),
    ...(options.prompt_id === undefined
      ? {}
      : { prompt_id: options.prompt_id }),
  };
  const text = JSON.stringify(request) + "\n";
  const size = new TextEncoder().encode(text).length;
  if (size > MAX_REQUEST_BYTES) {
    throw new UsageError(
      `The ${command} request is too large: ${size} bytes, the limit is ${MAX_REQUEST_BYTES}`,
      {
        code: "REQUEST_TOO_LARGE",
        ...(command === "steer"
          ? {
            hint: "Say it in fewer words; a steer is guidance, not a document",
          }
          : {}),
      },
    );
  }
  return { request, text };
}

/**
 * Writes a request into `requests/` durably (a dot-temp file is synced and
 * then linked into place, never replacing an existing request), then makes
 * sure someone will decide it: when the run ended while the request was
 * being written, the client settles it itself (receipt and log entry,
 * `rejected`) and says so.
 *
 * @throws {UsageError} when the request is larger than {@linkcode MAX_REQUEST_BYTES}.
 * @throws {StateError} when it cannot be written, or the run ended before
 * it could be applied.
 */
export async function writeRequest(
  ref: RunRef,
  command: string,
  params: Record<string, unknown>,
  options: RequestOptions & { prompt_id?: string } = {},
): Promise<SentRequest> {
  const paths = controlPaths(ref.state_root);
  const { request, text } = await newRequest(ref, command, params, options);
  const placed = await placeRequest(paths, `${request.id}.json`, text, request);
  if (placed.state === "settled" && placed.receipt.outcome === "rejected") {
    const after = placed.after;
    throw new StateError(
      `Run ${ref.run_id} ${
        after === null || after.run_id !== ref.run_id
          ? "was replaced by another run"
          : `ended (${after.status})`
      } before the request could be applied: ${
        placed.receipt.reason ?? "it was refused"
      }`,
      {
        code: "RUN_ENDED",
        hint:
          `Request ${request.id} is recorded as rejected in 'prompt_runner control log'`,
      },
    );
  }
  return { request_id: request.id, run_id: ref.run_id };
}
