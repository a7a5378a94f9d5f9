/**
 * The control plane, runner side: publishes the snapshot and the event
 * stream, consumes requests at event boundaries with a durable order
 * (receipt, log entry, delete, apply), and records steers. Nothing arriving
 * here is fatal to a run: a broken control directory becomes a warning, and
 * a link planted in the state root is moved aside, logged and never
 * followed.
 *
 * @module
 */

import { SteerLedger } from "./steer_ledger.ts";
import { basename, join } from "node:path";
import { LinkRefusedError } from "../shared/errors.ts";
import type { RunEvent, RunStatus } from "../shared/events.ts";
import {
  anchored,
  appendLine,
  checkPath,
  ensurePrivateDir,
  moveLinkAside,
  openAppend,
  openExisting,
  readTextIfExists,
  removeStaleTemps,
  repairTornTail,
  syncDir,
  writeFileAtomic,
} from "../shared/files.ts";
import type {
  BoundaryCommand,
  LinkRefusal,
  PromptStartInfo,
  RunHooks,
  RunOpened,
  RunOpenInfo,
  SteerResult,
} from "../shared/run_hooks.ts";
import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import { hostname } from "../shared/run_lock.ts";
import { openStateRoot } from "../shared/state_root.ts";
import {
  appendLogEntry,
  type LogEntry,
  type Outcome,
  readLogFile,
} from "./log_entry.ts";
import {
  type ControlPaths,
  controlPaths,
  requestIdOf,
  safeName,
} from "./paths.ts";
import { publishReceipt, readReceipt, type Receipt } from "./receipt.ts";
import { MAX_REQUEST_BYTES } from "./request.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";

export { MAX_REQUEST_BYTES };

/** Options for {@linkcode openPlane}. */
export interface PlaneOptions {
  /** Where warnings go (a broken control directory, a failed write). */
  warn?: (message: string) => void | Promise<void>;
}

/**
 * How much request work one boundary may do while events flow, and while
 * they do not: a flood of requests never starves the agent's stream, and
 * the backlog still drains in order.
 */
const BUSY_BUDGET = { count: 8, ms: 20 };
const IDLE_BUDGET = { count: 200, ms: 250 };

/** Dot-files in `requests/` untouched this long are a killed client's leftovers. */
const STALE_CLIENT_FILE_MS = 10 * 60 * 1000;

/** The steps of request processing a test can stop the runner at. */
const FAULT_STEPS = [
  "request_decided",
  "receipt_written",
  "log_written",
  "request_deleted",
  "steer_recorded",
] as const;
type FaultStep = typeof FAULT_STEPS[number];

function faultStep(): FaultStep | null {
  try {
    const value = Deno.env.get("PROMPT_RUNNER_TEST_FAULT");
    return (FAULT_STEPS as readonly string[]).includes(value ?? "")
      ? value as FaultStep
      : null;
  } catch {
    return null;
  }
}

interface Verdict {
  command: string;
  params: Record<string, unknown>;
  author: string | null;
  outcome: Outcome;
  reason: string | null;
  prompt_id: string | null;
  apply: BoundaryCommand | null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A key that names a kind of failure, not its instance (no temp names). */
function errorKind(error: unknown): string {
  if (!(error instanceof Error)) return "unknown";
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : error.name;
}

/** No request needs more levels than this; a deeper one is refused unread. */
const MAX_NESTING = 32;

/** How deeply arrays and objects nest in a value (without recursion). */
function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== "object" || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_NESTING) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** A request's params as they can be logged (a value JSON cannot write is not). */
function loggable(
  params: Record<string, unknown>,
  name: string,
): Record<string, unknown> {
  try {
    JSON.stringify(params);
    return params;
  } catch {
    return {
      file: name,
      unrecorded: "the params could not be written as JSON",
    };
  }
}

/** Reads at most `limit` + 1 bytes of an open file, and closes it. */
async function readCapped(
  file: Deno.FsFile,
  limit: number,
): Promise<Uint8Array> {
  try {
    const buffer = new Uint8Array(limit + 1);
    let size = 0;
    while (size < buffer.length) {
      const n = await file.read(buffer.subarray(size));
      if (n === null || n === 0) break;
      size += n;
    }
    return buffer.subarray(0, size);
  } finally {
    file.close();
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:.]/g, "");
}
/**
 * The runner side of the control plane. It implements the runner's hooks;
 * see {@linkcode openPlane}.
 */
export class ControlPlane implements RunHooks {
  readonly #paths: ControlPaths;
  readonly #options: PlaneOptions;
  readonly #fault: FaultStep | null = faultStep();
  #runId = "";
  #disabled = false;
  #closed = false;
  #warned = new Set<string>();
  #snapshot!: Snapshot;
  #events: Deno.FsFile | null = null;
  #startedAt = 0;
  #promptStartedAt = 0;
  #lastWrite = 0;
  #dirty = false;
  #writing: Promise<void> = Promise.resolve();
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Request files this process decided (a failed delete is retried, never re-applied). */
  #handled = new Set<string>();
  /** Request files listed and not yet processed, in order. */
  #queue: string[] = [];
  /** Outcomes already logged, by request id. */
  #logged = new Map<string, Set<Outcome>>();
  /** Accepted steers waiting for their lane, by prompt. */
  #pending = new Map<string, number>();
  /** Steers delivered in this run, by prompt. */
  #delivered = new SteerLedger();
  /** The prompt steers go to, while one runs. */
  #current: string | null = null;
  #tokenBase = { input: 0, output: 0 };
  #tokens = { input: 0, output: 0 };
  /** What {@linkcode openPlane} found of an earlier process of the same run id. */
  opened: RunOpened = { last_seq: 0, view: {}, delivered_steers: {} };

  /** Creates a plane for a state root; {@linkcode openPlane} opens it. */
  constructor(stateRoot: string, options: PlaneOptions = {}) {
    this.#paths = controlPaths(stateRoot);
    this.#options = options;
  }

  get #within(): { within: string } {
    return { within: this.#paths.root };
  }

  async #warn(key: string, message: string): Promise<void> {
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    try {
      await this.#options.warn?.(`control plane: ${message}`);
    } catch {
      // Warnings are best effort.
    }
  }

  #crashAt(step: FaultStep): void {
    // Test-only: die the way a killed runner dies, at a chosen step.
    if (this.#fault === step) Deno.kill(Deno.pid, "SIGKILL");
  }

  /**
   * Runs file work in the state root. A link found on the way is moved
   * aside (never followed), logged and warned about once, and the work is
   * tried again; a directory found missing (`dir`) is made again.
   */
  async #guard<T>(work: () => Promise<T>, dir?: string): Promise<T> {
    for (let tries = 0;; tries++) {
      try {
        return await work();
      } catch (error) {
        if (tries >= 4) throw error;
        if (error instanceof LinkRefusedError) {
          await this.#quarantine(error.path);
        } else if (
          dir !== undefined && error instanceof Deno.errors.NotFound
        ) {
          await ensurePrivateDir(dir, this.#within);
        } else {
          throw error;
        }
      }
    }
  }

  /** Moves a link planted in the state root aside, and says so. */
  async #quarantine(link: string): Promise<void> {
    const refusal = await moveLinkAside(this.#paths.root, link);
    if (refusal !== null) await this.linkRefused(refusal);
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
    await this.#warn(`link:${refusal.path}`, reason);
    try {
      // Through the guard: the log itself may be the next link moved aside.
      await this.#guard(
        () =>
          appendLogEntry(this.#paths, {
            run_id: this.#runId,
            request_id: null,
            command: "link_refused",
            params: { ...refusal },
            author: "runner",
            outcome: "rejected",
            reason,
            prompt_id: this.#current,
            attempt: this.#snapshot?.attempt ?? null,
          }),
        this.#paths.dir,
      );
    } catch (error) {
      await this.#warn(
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
  async #replacedUnseen(path: string): Promise<void> {
    const reason = `${
      JSON.stringify(path)
    } was moved away by someone else as the runner rewrote it, and whatever was put in its place (a link, it seems) was replaced, never followed`;
    await this.#warn(`foreign:${path}`, reason);
    try {
      await appendLogEntry(this.#paths, {
        run_id: this.#runId,
        request_id: null,
        command: "link_refused",
        params: { path, kind: "replaced", target: null, moved_to: null },
        author: "runner",
        outcome: "rejected",
        reason,
        prompt_id: this.#current,
        attempt: this.#snapshot?.attempt ?? null,
      });
    } catch {
      // The warning stands.
    }
  }

  /** Opens the plane for a run: directories, archive, reconciliation, snapshot. */
  async open(info: RunOpenInfo): Promise<RunOpened> {
    this.#runId = info.run_id;
    this.#startedAt = performance.now();
    const now = new Date().toISOString();
    this.#snapshot = {
      v: 1,
      run_id: info.run_id,
      packet: info.packet,
      packet_dir: info.packet_dir,
      status: "running",
      prompt_id: null,
      prompt_name: null,
      attempt: null,
      mode: null,
      provider: info.provider,
      model: info.model,
      run_started_at: now,
      prompt_started_at: null,
      updated_at: now,
      elapsed_ms: 0,
      prompt_elapsed_ms: 0,
      tool_count: 0,
      input_tokens: 0,
      output_tokens: 0,
      event_count: 0,
      last_seq: 0,
      steer_count: 0,
      max_steers: info.max_steers,
      view: { ...info.view },
      pid: Deno.pid,
      host: hostname(),
    };
    try {
      const paths = this.#paths;
      await openStateRoot(paths.root, {
        create: true,
        repair: true,
        warn: (message) => this.#warn("root-mode", message),
      });
      for (
        const dir of [paths.dir, paths.requests, paths.outcomes, paths.archive]
      ) {
        await this.#guard(() => ensurePrivateDir(dir, this.#within));
      }
      await this.#cleanTemps();
      await this.#guard(() => repairTornTail(paths.log, this.#within));
      const previous = await readSnapshotFile(paths.snapshot, paths.root)
        .catch(() => null);
      for (const entry of await this.#readLog()) {
        if (entry.request_id) this.#noteLogged(entry.request_id, entry.outcome);
      }
      await this.#reconcileDecided();
      if (await this.#adoptStream(previous?.run_id ?? null)) {
        if (previous?.run_id === info.run_id) {
          this.#snapshot.run_started_at = previous.run_started_at;
        }
        await this.#replayRun();
      }
      await this.#finishOrphanedSteers();
      this.#snapshot.view = { ...info.view, ...this.opened.view };
      this.#snapshot.last_seq = this.opened.last_seq;
      this.#snapshot.event_count = this.opened.last_seq;
      this.#events = await this.#guard(
        () => openAppend(paths.events, this.#within),
        paths.dir,
      );
      await this.#writeSnapshot();
    } catch (error) {
      this.#disabled = true;
      this.#events?.close();
      this.#events = null;
      await this.#warn(
        "open",
        `disabled for this run, the run goes on without it: ${
          errorText(error)
        }`,
      );
      return this.opened;
    }
    this.#timer = setInterval(() => {
      if (performance.now() - this.#lastWrite >= 1500) {
        this.#queueSnapshot();
      }
    }, 1000);
    Deno.unrefTimer(this.#timer);
    return this.opened;
  }

  /** Removes the dot-temp files a killed runner (or client) left behind. */
  async #cleanTemps(): Promise<void> {
    const paths = this.#paths;
    try {
      // Only this runner (it holds the run lock) writes these now; a client
      // settling a late receipt writes its temp file again if it vanishes.
      for (const dir of [paths.dir, paths.outcomes, paths.archive]) {
        await removeStaleTemps(dir, this.#within);
      }
      await removeStaleTemps(paths.requests, {
        ...this.#within,
        olderThanMs: STALE_CLIENT_FILE_MS,
      });
    } catch (error) {
      await this.#warn(
        "temps",
        `cannot remove leftover temporary files: ${errorText(error)}`,
      );
    }
  }

  async #readLog(): Promise<LogEntry[]> {
    return await this.#guard(() => readLogFile(this.#paths));
  }

  #noteLogged(id: string, outcome: Outcome): void {
    const set = this.#logged.get(id) ?? new Set<Outcome>();
    set.add(outcome);
    this.#logged.set(id, set);
  }

  /**
   * Makes `events.jsonl` this run's stream: the run's own stream continues
   * (from the file, or brought back from the archive), another run's is
   * moved to the archive. Who owns the file is read from its first event,
   * so a lost or foreign snapshot cannot split a run's stream.
   *
   * @returns Whether this run id already had a stream (it continues).
   */
  async #adoptStream(previousRun: string | null): Promise<boolean> {
    const paths = this.#paths;
    const present = await this.#guard(() =>
      checkPath(paths.root, paths.events)
    );
    if (present !== null) {
      const owner = (await this.#streamOwner()) ?? previousRun;
      if (owner === this.#runId) {
        await this.#reopenStream();
        return true;
      }
      await this.#archive(owner);
    }
    const archived = `${safeName(this.#runId)}.jsonl`;
    const restored = anchored(paths.root, paths.archive, (here) => {
      if (here.lstat(archived) === null) return false;
      // Back to control/events.jsonl, from control/events/.
      here.rename(archived, `../${basename(paths.events)}`);
      return true;
    });
    if (restored) {
      await syncDir(paths.dir);
      await this.#reopenStream();
      return true;
    }
    return false;
  }

  /** The run id of the first event in `events.jsonl`, or `null`. */
  async #streamOwner(): Promise<string | null> {
    const file = await openExisting(this.#paths.events, this.#within);
    if (file === null) return null;
    try {
      const buffer = new Uint8Array(64 * 1024);
      const n = await file.read(buffer);
      if (n === null) return null;
      const text = new TextDecoder().decode(buffer.subarray(0, n));
      const end = text.indexOf("\n");
      if (end < 0) return null;
      const runId = JSON.parse(text.slice(0, end)).run_id;
      return typeof runId === "string" ? runId : null;
    } catch {
      return null;
    } finally {
      file.close();
    }
  }

  /** Moves the previous run's events aside, byte for byte. */
  async #archive(previousRun: string | null): Promise<void> {
    const base = safeName(previousRun ?? `unknown-${stamp()}`);
    const events = basename(this.#paths.events);
    const archive = basename(this.#paths.archive);
    await ensurePrivateDir(this.#paths.archive, this.#within);
    anchored(this.#paths.root, this.#paths.dir, (here) => {
      for (let n = 0;; n++) {
        const name = n === 0 ? `${base}.jsonl` : `${base}-${n}.jsonl`;
        if (here.lstat(`${archive}/${name}`) !== null) continue;
        here.rename(events, `${archive}/${name}`);
        return;
      }
    });
    await syncDir(this.#paths.archive);
    await syncDir(this.#paths.dir);
  }

  /**
   * Continues this run's stream: a torn last line (a crash mid-append) is
   * cut off, and the last `seq` is read from the end of the file.
   */
  async #reopenStream(): Promise<void> {
    await repairTornTail(this.#paths.events, this.#within);
    const file = await openExisting(this.#paths.events, this.#within);
    if (file === null) return;
    try {
      const size = (await file.stat()).size;
      const chunk = new Uint8Array(Math.min(size, 256 * 1024));
      await file.seek(size - chunk.length, Deno.SeekMode.Start);
      let read = 0;
      while (read < chunk.length) {
        const n = await file.read(chunk.subarray(read));
        if (n === null || n === 0) break;
        read += n;
      }
      const lines = new TextDecoder().decode(chunk.subarray(0, read))
        .split("\n").filter(Boolean);
      for (let i = lines.length - 1; i >= 0; i--) {
        try {
          const seq = JSON.parse(lines[i]!).seq;
          if (Number.isInteger(seq)) {
            this.opened.last_seq = seq;
            break;
          }
        } catch {
          // The chunk may start mid-line: keep looking further back.
        }
      }
    } finally {
      file.close();
    }
  }

  /** Replays what an earlier process of this run id applied: view changes, delivered steers. */
  async #replayRun(): Promise<void> {
    const view: Record<string, string> = {};
    for (const entry of await this.#readLog()) {
      if (
        entry.run_id === this.#runId && entry.command === "set_view" &&
        entry.outcome === "applied"
      ) {
        try {
          Object.assign(view, parseViewSettings(entry.params));
        } catch {
          // An applied view was valid when applied.
        }
      }
    }
    this.opened.view = view as Partial<ViewSettings>;
    for (const [prompt, ids] of await this.#interventions()) {
      this.#delivered.restore(prompt, ids.size);
      this.opened.delivered_steers[prompt] = ids.size;
    }
  }

  /** Request ids of steers delivered in this run, by prompt. */
  async #interventions(
    runId: string | null = this.#runId,
  ): Promise<Map<string, Set<string>>> {
    const result = new Map<string, Set<string>>();
    const dir = this.#paths.interventions;
    let entries: Deno.DirEntry[] = [];
    try {
      entries = anchored(this.#paths.root, dir, (here) => here.list());
    } catch {
      return result;
    }
    for (const entry of entries) {
      if (!entry.isFile || !entry.name.endsWith(".jsonl")) continue;
      const text = await readTextIfExists(join(dir, entry.name), this.#within)
        .catch(() => null);
      for (const line of (text ?? "").split("\n")) {
        try {
          const record = JSON.parse(line);
          if (runId !== null && record.run_id !== runId) continue;
          const ids = result.get(record.prompt) ?? new Set<string>();
          ids.add(record.request_id ?? `${record.at}`);
          result.set(record.prompt, ids);
        } catch {
          // Torn line.
        }
      }
    }
    return result;
  }

  /**
   * Finishes requests an earlier process decided but did not finish: the
   * receipt exists, so the decision stands; the log entry is written if it
   * is missing and the request file is removed. Nothing is applied again.
   */
  async #reconcileDecided(): Promise<void> {
    for (const name of await this.#pendingNames()) {
      const receipt = await readReceipt(this.#paths, name);
      if (receipt !== null && receipt.decided_by !== "client") {
        await this.#finishDecided(name, receipt);
      }
    }
  }

  async #finishDecided(name: string, receipt: Receipt): Promise<void> {
    if (!this.#logged.get(receipt.request_id)?.has(receipt.outcome)) {
      const request = await this.#readRequestQuietly(name);
      await this.#appendLog({
        run_id: receipt.run_id,
        request_id: receipt.request_id,
        command: receipt.command,
        params: isRecord(request?.params)
          ? loggable(request.params, name)
          : { file: name },
        author: typeof request?.author === "string" ? request.author : null,
        outcome: receipt.outcome,
        reason: receipt.reason,
        prompt_id: typeof request?.prompt_id === "string"
          ? request.prompt_id
          : null,
        attempt: null,
      });
    }
    this.#handled.add(name);
    await this.#removeRequest(name);
  }

  /** Gives every accepted steer without a final entry its final entry. */
  async #finishOrphanedSteers(): Promise<void> {
    const entries = await this.#readLog();
    const delivered = new Set<string>();
    for (const ids of (await this.#interventions(null)).values()) {
      for (const id of ids) delivered.add(id);
    }
    for (const entry of entries) {
      if (
        entry.command !== "steer" || entry.outcome !== "accepted" ||
        entry.request_id === null
      ) continue;
      const logged = this.#logged.get(entry.request_id);
      if (logged?.has("applied") || logged?.has("rejected")) continue;
      const wasDelivered = delivered.has(entry.request_id);
      await this.#appendLog({
        ...entry,
        outcome: wasDelivered ? "applied" : "rejected",
        reason: wasDelivered
          ? null
          : "the runner stopped before the steer could be delivered; send it again if it still matters",
      });
    }
  }

  /** The request files waiting in `requests/`, in name order. */
  async #pendingNames(): Promise<string[]> {
    const dir = this.#paths.requests;
    return await this.#guard(async () => {
      await Promise.resolve();
      const entries = anchored(this.#paths.root, dir, (here) => here.list());
      // Dot-files are requests still being written, or claimed by a client.
      return entries.map((entry) => entry.name)
        .filter((name) => !name.startsWith(".")).sort();
    }, dir);
  }

  async #readRequestQuietly(
    name: string,
  ): Promise<Record<string, unknown> | null> {
    try {
      const file = this.#openRequest(name);
      if (file === null) return null;
      const bytes = await readCapped(file, MAX_REQUEST_BYTES);
      if (bytes.length > MAX_REQUEST_BYTES) return null;
      const value = JSON.parse(new TextDecoder().decode(bytes));
      return isRecord(value) ? value : null;
    } catch {
      return null;
    }
  }

  /** Opens a request file, never through a link; `null` when it is gone. */
  #openRequest(name: string): Deno.FsFile | null {
    return anchored(
      this.#paths.root,
      this.#paths.requests,
      (here) => here.openExisting(name, { read: true }),
    );
  }

  async #removeRequest(name: string): Promise<void> {
    const path = join(this.#paths.requests, name);
    try {
      await Promise.resolve();
      // A directory is removed whole: its links are removed, never followed.
      anchored(
        this.#paths.root,
        this.#paths.requests,
        (here) => here.remove(name),
      );
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      await this.#warn(
        `delete:${errorKind(error)}`,
        `cannot remove request "${path}": ${errorText(error)}`,
      );
    }
  }

  async #appendLog(entry: Omit<LogEntry, "v" | "at">): Promise<void> {
    await this.#guard(
      () => appendLogEntry(this.#paths, entry),
      this.#paths.dir,
    );
    if (entry.request_id) this.#noteLogged(entry.request_id, entry.outcome);
  }

  /**
   * Reads and judges one request file; `null` when it is gone (its client
   * claimed it back, or it was removed).
   */
  async #decide(name: string): Promise<Verdict | null> {
    const reject = (
      reason: string,
      command = "unknown",
      params: Record<string, unknown> = { file: name },
      author: string | null = null,
    ): Verdict => ({
      command,
      params,
      author,
      outcome: "rejected",
      reason,
      prompt_id: this.#current,
      apply: null,
    });
    const info = anchored(
      this.#paths.root,
      this.#paths.requests,
      (here) => here.lstat(name),
    );
    if (info === null) {
      if (!name.includes("\uFFFD")) return null;
      return reject(
        "its file name is not valid UTF-8, so it cannot be read or removed (remove it by hand)",
      );
    }
    if (!info.isFile) {
      const kind = info.isSymlink
        ? "a symbolic link"
        : info.isDirectory
        ? "a directory"
        : "a special file";
      return reject(`not a regular file (${kind})`);
    }
    if (info.size > MAX_REQUEST_BYTES) {
      return reject(
        `too large: ${info.size} bytes, the limit is ${MAX_REQUEST_BYTES}`,
      );
    }
    let bytes: Uint8Array;
    try {
      const file = this.#openRequest(name);
      if (file === null) return null;
      bytes = await readCapped(file, MAX_REQUEST_BYTES);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      return reject(`cannot be read: ${errorText(error)}`);
    }
    if (bytes.length > MAX_REQUEST_BYTES) {
      return reject(`too large: the limit is ${MAX_REQUEST_BYTES} bytes`);
    }
    let value: unknown;
    try {
      value = JSON.parse(new TextDecoder().decode(bytes));
    } catch (error) {
      return reject(`not JSON: ${errorText(error)}`, "unparseable");
    }
    if (nestingDepth(value) > MAX_NESTING) {
      return reject(
        `too deeply nested: more than ${MAX_NESTING} levels of arrays and objects`,
        "unparseable",
      );
    }
    if (!isRecord(value)) {
      const kind = Array.isArray(value)
        ? "an array"
        : value === null
        ? "null"
        : `a ${typeof value}`;
      return reject(`not a JSON object (${kind})`, "unparseable");
    }
    const author = typeof value.author === "string" ? value.author : null;
    if (typeof value.command !== "string" || value.command === "") {
      return reject(
        "the request has no command",
        "unknown",
        { file: name },
        author,
      );
    }
    const command = value.command;
    const params = isRecord(value.params) ? loggable(value.params, name) : {};
    if (value.params !== undefined && !isRecord(value.params)) {
      return reject("params must be a JSON object", command, {}, author);
    }
    if (typeof value.run_id !== "string") {
      return reject(
        "the request names no run_id, so it cannot be matched to this run",
        command,
        params,
        author,
      );
    }
    if (value.run_id !== this.#runId) {
      return reject(
        `the request targets run ${value.run_id}, but this is run ${this.#runId}`,
        command,
        params,
        author,
      );
    }
    if (command === "set_view") {
      try {
        const view = parseViewSettings(params);
        return {
          command,
          params,
          author,
          outcome: "applied",
          reason: null,
          prompt_id: this.#current,
          apply: {
            command: "set_view",
            view,
            request_id: requestIdOf(name),
            author: author ?? "unknown",
          },
        };
      } catch (error) {
        return reject(errorText(error), command, params, author);
      }
    }
    if (command === "steer") {
      const text = typeof params.text === "string" ? params.text.trim() : "";
      const target = typeof value.prompt_id === "string"
        ? value.prompt_id
        : null;
      const steerParams = { text };
      if (text === "") {
        return reject("empty steer: it has no text", command, params, author);
      }
      if (this.#current === null) {
        return reject(
          "no prompt is running, so there is nothing to steer",
          command,
          steerParams,
          author,
        );
      }
      if (target !== null && target !== this.#current) {
        return reject(
          `the steer is for prompt ${target}, but prompt ${this.#current} is running`,
          command,
          steerParams,
          author,
        );
      }
      const used = this.#delivered.count(this.#current) +
        (this.#pending.get(this.#current) ?? 0);
      const max = this.#snapshot.max_steers;
      if (used >= max) {
        return reject(
          `steer budget spent: ${used}/${max} for prompt ${this.#current} in this run (raise recovery.max_steers to allow more)`,
          command,
          steerParams,
          author,
        );
      }
      return {
        command,
        params: steerParams,
        author,
        outcome: "accepted",
        reason: null,
        prompt_id: this.#current,
        apply: {
          command: "steer",
          text,
          prompt_id: this.#current,
          request_id: requestIdOf(name),
          author: author ?? "unknown",
        },
      };
    }
    return reject(
      `unknown command ${JSON.stringify(command)}: expected set_view or steer`,
      command,
      params,
      author,
    );
  }

  /**
   * Decides one request and makes the decision durable: receipt, log
   * entry, removal. With `ended`, the run is over and nothing is applied.
   *
   * @returns The command to apply, if any.
   */
  async #process(
    name: string,
    ended: RunStatus | null,
  ): Promise<BoundaryCommand | null> {
    if (this.#handled.has(name)) {
      await this.#removeRequest(name);
      return null;
    }
    const existing = await this.#guard(() => readReceipt(this.#paths, name));
    if (existing !== null) {
      if (existing.decided_by === "client") {
        // Its client claimed it back as the run ended, and logs it itself.
        this.#handled.add(name);
        return null;
      }
      // Decided by an earlier process of the runner that died before finishing.
      await this.#finishDecided(name, existing);
      return null;
    }
    let verdict = await this.#guard(() => this.#decide(name));
    if (verdict === null) return null;
    if (ended !== null && verdict.outcome !== "rejected") {
      verdict = {
        ...verdict,
        outcome: "rejected",
        reason: `the run ended (${ended}) before the request was applied`,
        apply: null,
      };
    }
    this.#crashAt("request_decided");
    const id = requestIdOf(name);
    const receipt: Receipt = {
      request_id: id,
      run_id: this.#runId,
      command: verdict.command,
      outcome: verdict.outcome,
      reason: verdict.reason,
      recorded_at: new Date().toISOString(),
    };
    if (
      !(await this.#guard(
        () => publishReceipt(this.#paths, name, receipt),
        this.#paths.outcomes,
      ))
    ) {
      // A client settled it first (the run was ending): it logs it too.
      this.#handled.add(name);
      return null;
    }
    this.#crashAt("receipt_written");
    await this.#appendLog({
      run_id: this.#runId,
      request_id: id,
      command: verdict.command,
      params: verdict.params,
      author: verdict.author,
      outcome: verdict.outcome,
      reason: verdict.reason,
      prompt_id: verdict.prompt_id,
      attempt: this.#snapshot.attempt,
    });
    this.#crashAt("log_written");
    this.#handled.add(name);
    await this.#removeRequest(name);
    this.#crashAt("request_deleted");
    if (verdict.apply?.command === "steer") {
      const prompt = verdict.apply.prompt_id;
      this.#pending.set(prompt, (this.#pending.get(prompt) ?? 0) + 1);
    }
    this.#dirty = true;
    return verdict.apply;
  }

  /**
   * Consumes pending requests, in order, within the boundary's budget;
   * returns the commands to apply.
   */
  async #consume(idle: boolean): Promise<BoundaryCommand[]> {
    const commands: BoundaryCommand[] = [];
    if (this.#queue.length === 0) {
      try {
        this.#queue = await this.#pendingNames();
      } catch (error) {
        await this.#warn(
          `list:${errorKind(error)}`,
          `cannot list requests: ${errorText(error)}`,
        );
        return commands;
      }
    }
    const budget = idle ? IDLE_BUDGET : BUSY_BUDGET;
    const started = performance.now();
    let done = 0;
    while (this.#queue.length > 0) {
      if (
        done > 0 &&
        (done >= budget.count || performance.now() - started >= budget.ms)
      ) break;
      const name = this.#queue[0]!;
      try {
        const command = await this.#process(name, null);
        if (command) commands.push(command);
      } catch (error) {
        // The request stays first in line and is tried at the next boundary.
        await this.#warn(
          `consume:${errorKind(error)}`,
          `cannot process request ${JSON.stringify(name)}: ${errorText(error)}`,
        );
        break;
      }
      this.#queue.shift();
      done++;
    }
    return commands;
  }

  /** The snapshot as it stands (a copy). */
  get current(): Snapshot {
    return structuredClone(this.#snapshot);
  }

  #refreshClock(): void {
    const now = performance.now();
    this.#snapshot.elapsed_ms = Math.round(now - this.#startedAt);
    this.#snapshot.prompt_elapsed_ms = this.#promptStartedAt
      ? Math.round(now - this.#promptStartedAt)
      : 0;
    this.#snapshot.updated_at = new Date().toISOString();
  }

  #queueSnapshot(): Promise<void> {
    this.#writing = this.#writing.then(() => this.#writeSnapshot());
    return this.#writing;
  }

  async #writeSnapshot(): Promise<void> {
    if (this.#disabled) return;
    this.#refreshClock();
    this.#lastWrite = performance.now();
    this.#dirty = false;
    try {
      // Events first, so the snapshot never points past durable events.
      await this.#events?.sync();
      const text = JSON.stringify(this.#snapshot, null, 2) + "\n";
      await this.#guard(
        () =>
          writeFileAtomic(this.#paths.snapshot, text, {
            ...this.#within,
            onForeign: () => this.#replacedUnseen("control/snapshot.json"),
          }),
        this.#paths.dir,
      );
    } catch (error) {
      await this.#warn(
        `snapshot:${errorKind(error)}`,
        `cannot write the snapshot: ${errorText(error)}`,
      );
    }
  }

  /** An attempt started: the snapshot names it at once. */
  async promptStarted(info: PromptStartInfo): Promise<void> {
    if (this.#disabled) return;
    if (this.#current !== info.prompt_id) {
      this.#pending.delete(info.prompt_id);
    }
    this.#current = info.prompt_id;
    this.#promptStartedAt = performance.now();
    Object.assign(this.#snapshot, {
      prompt_id: info.prompt_id,
      prompt_name: info.name,
      attempt: info.attempt,
      mode: info.mode,
      provider: info.provider,
      model: info.model,
      prompt_started_at: new Date().toISOString(),
      tool_count: 0,
      input_tokens: 0,
      output_tokens: 0,
      steer_count: this.#delivered.count(info.prompt_id),
      max_steers: info.max_steers,
    });
    this.#tokenBase = { input: 0, output: 0 };
    this.#tokens = { input: 0, output: 0 };
    await this.#queueSnapshot();
  }

  /** Records an event: appended to `events.jsonl` and folded into the snapshot. */
  async observe(event: RunEvent): Promise<void> {
    if (this.#disabled) return;
    try {
      await this.#events!.write(
        new TextEncoder().encode(JSON.stringify(event) + "\n"),
      );
    } catch (error) {
      await this.#warn(
        `events:${errorKind(error)}`,
        `cannot append events: ${errorText(error)}`,
      );
    }
    const snap = this.#snapshot;
    snap.event_count++;
    snap.last_seq = event.seq;
    const data = event.data;
    switch (event.type) {
      case "run_started":
        // A new session (a resume) may count its tokens from zero again.
        this.#tokenBase = {
          input: this.#tokenBase.input + this.#tokens.input,
          output: this.#tokenBase.output + this.#tokens.output,
        };
        this.#tokens = { input: 0, output: 0 };
        break;
      case "tool_call_started":
        snap.tool_count++;
        break;
      case "token_usage_updated": {
        const input = Number(data.input_tokens);
        const output = Number(data.output_tokens);
        if (Number.isFinite(input) && input >= 0) this.#tokens.input = input;
        if (Number.isFinite(output) && output >= 0) {
          this.#tokens.output = output;
        }
        break;
      }
      case "prompt_completed":
      case "prompt_failed":
        if (event.prompt_id === this.#current) this.#current = null;
        break;
    }
    snap.input_tokens = this.#tokenBase.input + this.#tokens.input;
    snap.output_tokens = this.#tokenBase.output + this.#tokens.output;
    this.#dirty = true;
  }

  /**
   * An event boundary: consumes pending requests (within a budget, so a
   * flood never starves the stream) and returns the commands to apply
   * before the next event. The snapshot is written after any request, and
   * otherwise at most every 100 ms while events flow.
   */
  async boundary(context: { idle: boolean }): Promise<BoundaryCommand[]> {
    if (this.#disabled || this.#closed) return [];
    const commands = await this.#consume(context.idle);
    const since = performance.now() - this.#lastWrite;
    if (commands.length > 0 || (this.#dirty && since >= 100) || since >= 1500) {
      await this.#queueSnapshot();
    }
    return commands;
  }

  /** A steer was delivered or refused by its lane: record it. */
  async steerSettled(result: SteerResult): Promise<void> {
    if (this.#disabled) return;
    const steer = result.command;
    const prompt = steer.prompt_id;
    this.#pending.set(
      prompt,
      Math.max(0, (this.#pending.get(prompt) ?? 0) - 1),
    );
    let recordError: string | null = null;
    if (result.delivered) {
      const line = JSON.stringify({
        at: new Date().toISOString(),
        prompt,
        attempt: result.attempt,
        author: steer.author,
        text: steer.text,
        lane: result.provider,
        delivery: result.delivery,
        run_id: this.#runId,
        request_id: steer.request_id,
      });
      try {
        const dir = this.#paths.interventions;
        await this.#guard(async () => {
          await ensurePrivateDir(dir, this.#within);
          await appendLine(join(dir, `${safeName(prompt)}.jsonl`), line, {
            sync: true,
            ...this.#within,
          });
        });
        this.#crashAt("steer_recorded");
      } catch (error) {
        recordError = errorText(error);
        await this.#warn(
          `steer:${errorKind(error)}`,
          `cannot record a steer: ${recordError}`,
        );
      }
      const count = this.#delivered.record(prompt);
      if (this.#snapshot.prompt_id === prompt) {
        this.#snapshot.steer_count = count;
      }
    }
    try {
      await this.#appendLog({
        run_id: this.#runId,
        request_id: steer.request_id,
        command: "steer",
        params: result.delivered
          ? { text: steer.text, delivery: result.delivery }
          : { text: steer.text },
        author: steer.author,
        outcome: result.delivered ? "applied" : "rejected",
        reason: result.delivered
          ? recordError === null
            ? null
            : `delivered, but the intervention record failed: ${recordError}`
          : result.reason ?? "the lane refused it",
        prompt_id: prompt,
        attempt: result.attempt,
      });
    } catch (error) {
      await this.#warn(
        `steer-log:${errorKind(error)}`,
        `cannot log a steer: ${errorText(error)}`,
      );
    }
    await this.#queueSnapshot();
  }

  /** The view changed: the snapshot shows it at once. */
  steerCount(promptId: string): number {
    return this.#delivered.count(promptId);
  }

  async viewChanged(view: ViewSettings): Promise<void> {
    if (this.#disabled) return;
    this.#snapshot.view = { ...view };
    await this.#queueSnapshot();
  }

  /**
   * The runner stops without finishing (its environment failed): the
   * events are synced and closed, and no end is published, so the run can
   * be resumed as after a crash.
   */
  async abandon(): Promise<void> {
    if (this.#disabled || this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    try {
      await this.#writing;
      await this.#events?.sync();
    } catch {
      // The environment is failing: nothing more to save.
    }
    this.#events?.close();
    this.#events = null;
  }

  /**
   * The run ended: the snapshot records how (durably, first), then every
   * request still waiting is refused with a reason. A client that wrote a
   * request before it could see the final status has it decided here; one
   * that saw the final status settles its own request.
   */
  async close(status: RunStatus): Promise<void> {
    if (this.#disabled || this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#snapshot.status = status;
    await this.#queueSnapshot();
    let names: string[] = [];
    try {
      names = await this.#pendingNames();
    } catch (error) {
      await this.#warn(
        `close:${errorKind(error)}`,
        `cannot settle late requests: ${errorText(error)}`,
      );
    }
    for (const name of names) {
      try {
        await this.#process(name, status);
      } catch (error) {
        // One request that cannot be settled does not hold up the others;
        // it stays for the next run (or --resume) to settle.
        await this.#warn(
          `close:${errorKind(error)}`,
          `cannot settle late request ${JSON.stringify(name)}: ${
            errorText(error)
          }`,
        );
      }
    }
    this.#current = null;
    try {
      await this.#events?.sync();
    } catch {
      // Nothing more to do.
    }
    this.#events?.close();
    this.#events = null;
  }
}

/**
 * Opens the control plane of a run (the runner does this for every run with
 * a state root). It creates the control directory (mode 0700), moves the
 * previous run's `events.jsonl` to `events/<run id>.jsonl`, finishes any
 * request a killed runner left half-processed, and writes the first
 * snapshot. A control directory that cannot be used disables the plane with a
 * warning; it never fails the run.
 *
 * Requires `--allow-read` and `--allow-write` permissions.
 *
 * @param stateRoot The run's state root.
 * @param info What the runner knows of the run.
 * @param options Where warnings go.
 * @returns The plane, whose hooks the runner calls.
 *
 * @example Usage
 * ```ts
 * import { openPlane, snapshot } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const root = await Deno.makeTempDir();
 * const plane = await openPlane(root, {
 *   run_id: "r1",
 *   packet: "demo",
 *   packet_dir: root,
 *   state_root: root,
 *   view: { log_mode: "compact", tool_output: "summary", thinking: "show", diff: "stat" },
 *   max_steers: 3,
 *   prompt_ids: ["01"],
 *   provider: "simulated",
 *   model: "simulated",
 * });
 * assert.equal((await snapshot({ state_root: root, run_id: "r1" })).status, "running");
 * await plane.close("completed");
 * assert.equal((await snapshot({ state_root: root, run_id: "r1" })).status, "completed");
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function openPlane(
  stateRoot: string,
  info: RunOpenInfo,
  options: PlaneOptions = {},
): Promise<ControlPlane> {
  const plane = new ControlPlane(stateRoot, options);
  await plane.open(info);
  return plane;
}
