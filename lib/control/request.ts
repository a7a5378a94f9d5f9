/**
 * Control requests: files a client drops into `requests/` for the runner to
 * consume at its next event boundary.
 *
 * @module
 */

import { join } from "node:path";
import { StateError } from "../shared/errors.ts";
import { writeFileNoReplace } from "../shared/files.ts";
import { newId } from "../shared/new_id.ts";
import { readRunLock } from "../shared/run_lock.ts";
import { controlPaths, type RunRef } from "./paths.ts";
import { type Snapshot, snapshot } from "./snapshot.ts";

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

/** What a client gets back once its request is durable. */
export interface RequestReceipt {
  /** The request's id: find its outcome in `control log`. */
  request_id: string;
  /** The run it was sent to. */
  run_id: string;
}

/** Options shared by the request-writing client calls. */
export interface RequestOptions {
  /** Who asks; `$USER` (or `unknown`) when absent. */
  author?: string;
}

/** The author to record: the given one, else `$USER`, else `unknown`. */
export function defaultAuthor(author?: string): string {
  if (author !== undefined && author.trim() !== "") return author.trim();
  try {
    return Deno.env.get("USER") || Deno.env.get("USERNAME") || "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Checks that a run is live: it is the state root's current run, its
 * snapshot says running, and its runner process still holds the lock.
 *
 * @throws {StateError} naming the run's status when it is not running.
 */
export async function requireRunning(ref: RunRef): Promise<Snapshot> {
  const current = await snapshot(ref);
  if (current.status !== "running") {
    throw new StateError(
      `Run ${ref.run_id} is ${current.status}, not running`,
      {
        code: "RUN_NOT_RUNNING",
        hint:
          "Requests only reach a live run; start one with 'prompt_runner run'",
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
 * Writes a request into `requests/` durably: a dot-temp file is synced and
 * then linked into place, never replacing an existing request.
 */
export async function writeRequest(
  ref: RunRef,
  command: string,
  params: Record<string, unknown>,
  options: RequestOptions & { prompt_id?: string } = {},
): Promise<RequestReceipt> {
  const paths = controlPaths(ref.state_root);
  const id = newId();
  const request: ControlRequest = {
    v: 1,
    id,
    command,
    params,
    run_id: ref.run_id,
    author: defaultAuthor(options.author),
    issued_at: new Date().toISOString(),
    ...(options.prompt_id === undefined
      ? {}
      : { prompt_id: options.prompt_id }),
  };
  try {
    await writeFileNoReplace(
      join(paths.requests, `${id}.json`),
      JSON.stringify(request) + "\n",
    );
  } catch (error) {
    throw new StateError(
      `Cannot write request to "${paths.requests}": ${
        (error as Error).message
      }`,
      { code: "REQUEST_WRITE_FAILED", cause: error },
    );
  }
  return { request_id: id, run_id: ref.run_id };
}
