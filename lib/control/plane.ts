/**
 * The control plane, runner side: publishes the snapshot and the event
 * stream, consumes requests at event boundaries with a durable order
 * (receipt, log entry, delete, apply), and records steers. Nothing arriving
 * here is fatal to a run: a broken control directory becomes a warning.
 *
 * @module
 */

import { join } from "node:path";
import type { RunEvent, RunStatus } from "../shared/events.ts";
import {
  appendLine,
  ensurePrivateDir,
  FILE_MODE,
  pathExists,
  readTextIfExists,
  syncDir,
  writeFileAtomic,
  writeFileNoReplace,
} from "../shared/files.ts";
import type {
  BoundaryCommand,
  PromptStartInfo,
  RunHooks,
  RunOpened,
  RunOpenInfo,
  SteerResult,
} from "../shared/run_hooks.ts";
import { parseViewSettings, type ViewSettings } from "../shared/view.ts";
import { hostname } from "../shared/run_lock.ts";
import { type LogEntry, type Outcome, readLogFile } from "./log_entry.ts";
import { type ControlPaths, controlPaths, safeName } from "./paths.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";

/** Requests larger than this are refused unread. */
export const MAX_REQUEST_BYTES = 64 * 1024;

/** Options for {@linkcode openPlane}. */
export interface PlaneOptions {
  /** Where warnings go (a broken control directory, a failed write). */
  warn?: (message: string) => void | Promise<void>;
}

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

interface Decision {
  command: string;
  params: Record<string, unknown>;
  author: string | null;
  outcome: Outcome;
  reason: string | null;
  prompt_id: string | null;
  apply: BoundaryCommand | null;
}

interface Receipt {
  request_id: string;
  run_id: string;
  command: string;
  outcome: Outcome;
  reason: string | null;
  recorded_at: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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
  /** Request ids this process decided (a failed delete is retried, never re-applied). */
  #handled = new Set<string>();
  /** Outcomes already logged, by request id. */
  #logged = new Map<string, Set<Outcome>>();
  /** Accepted steers waiting for their lane, by prompt. */
  #pending = new Map<string, number>();
  /** Steers delivered in this run, by prompt. */
  #delivered = new Map<string, number>();
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
      for (
        const dir of [
          this.#paths.root,
          this.#paths.dir,
          this.#paths.requests,
          this.#paths.outcomes,
          this.#paths.archive,
        ]
      ) {
        await ensurePrivateDir(dir);
      }
      const previous = await readSnapshotFile(this.#paths.snapshot).catch(() =>
        null
      );
      for (const entry of await readLogFile(this.#paths.log)) {
        if (entry.request_id) this.#noteLogged(entry.request_id, entry.outcome);
      }
      await this.#reconcileDecided();
      if (previous?.run_id === info.run_id) {
        await this.#reopen();
        this.#snapshot.run_started_at = previous.run_started_at;
      } else {
        await this.#archive(previous?.run_id ?? null);
        // A run id used before (its stream archived) continues its stream.
        const archived = join(
          this.#paths.archive,
          `${safeName(info.run_id)}.jsonl`,
        );
        if (await pathExists(archived)) {
          await Deno.rename(archived, this.#paths.events);
          await this.#reopen();
        }
      }
      await this.#finishOrphanedSteers();
      this.#snapshot.view = { ...info.view, ...this.opened.view };
      this.#snapshot.last_seq = this.opened.last_seq;
      this.#events = await Deno.open(this.#paths.events, {
        append: true,
        create: true,
        mode: FILE_MODE,
      });
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

  #noteLogged(id: string, outcome: Outcome): void {
    const set = this.#logged.get(id) ?? new Set<Outcome>();
    set.add(outcome);
    this.#logged.set(id, set);
  }

  /** Moves the previous run's events aside, byte for byte. */
  async #archive(previousRun: string | null): Promise<void> {
    try {
      await Deno.lstat(this.#paths.events);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return;
      throw error;
    }
    const base = safeName(
      previousRun ??
        `unknown-${new Date().toISOString().replace(/[-:.]/g, "")}`,
    );
    for (let n = 0;; n++) {
      const target = join(
        this.#paths.archive,
        n === 0 ? `${base}.jsonl` : `${base}-${n}.jsonl`,
      );
      try {
        await Deno.lstat(target);
        continue;
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      await Deno.rename(this.#paths.events, target);
      await syncDir(this.#paths.archive);
      await syncDir(this.#paths.dir);
      return;
    }
  }

  /**
   * Reopens the same run id: events continue after the last complete line
   * (a torn tail from a crash is cut off), view changes and delivered steers
   * of the earlier process are replayed.
   */
  async #reopen(): Promise<void> {
    const text = await readTextIfExists(this.#paths.events);
    if (text !== null && text.length > 0) {
      const end = text.lastIndexOf("\n") + 1;
      if (end < text.length) {
        // Cut a torn final line: it never was a complete event.
        await Deno.truncate(
          this.#paths.events,
          new TextEncoder().encode(text.slice(0, end)).length,
        );
      }
      const lines = text.slice(0, end).split("\n").filter(Boolean);
      for (let i = lines.length - 1; i >= 0; i--) {
        try {
          const seq = JSON.parse(lines[i]!).seq;
          if (Number.isInteger(seq)) {
            this.opened.last_seq = seq;
            break;
          }
        } catch {
          // Keep looking for the last readable event.
        }
      }
      this.#snapshot.event_count = lines.length;
    }
    const view: Record<string, string> = {};
    for (const entry of await readLogFile(this.#paths.log)) {
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
      this.#delivered.set(prompt, ids.size);
      this.opened.delivered_steers[prompt] = ids.size;
    }
  }

  /** Request ids of steers delivered in this run, by prompt. */
  async #interventions(
    runId: string | null = this.#runId,
  ): Promise<Map<string, Set<string>>> {
    const result = new Map<string, Set<string>>();
    let entries: Deno.DirEntry[] = [];
    try {
      entries = await Array.fromAsync(Deno.readDir(this.#paths.interventions));
    } catch {
      return result;
    }
    for (const entry of entries) {
      if (!entry.name.endsWith(".jsonl")) continue;
      const text = await readTextIfExists(
        join(this.#paths.interventions, entry.name),
      );
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
      const receipt = await this.#readReceipt(name);
      if (receipt === null) continue;
      const request = await this.#readRequestQuietly(name);
      if (!this.#logged.get(receipt.request_id)?.has(receipt.outcome)) {
        await this.#appendLog({
          run_id: receipt.run_id,
          request_id: receipt.request_id,
          command: receipt.command,
          params: isRecord(request?.params) ? request.params : {},
          author: typeof request?.author === "string" ? request.author : null,
          outcome: receipt.outcome,
          reason: receipt.reason,
          prompt_id: typeof request?.prompt_id === "string"
            ? request.prompt_id
            : null,
          attempt: null,
        });
      }
      await this.#removeRequest(name);
    }
  }

  /** Gives every accepted steer without a final entry its final entry. */
  async #finishOrphanedSteers(): Promise<void> {
    const entries = await readLogFile(this.#paths.log);
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

  async #pendingNames(): Promise<string[]> {
    const names: string[] = [];
    for await (const entry of Deno.readDir(this.#paths.requests)) {
      // Dot-files are requests still being written.
      if (!entry.name.startsWith(".")) names.push(entry.name);
    }
    return names.sort();
  }

  #requestId(name: string): string {
    return name.endsWith(".json") ? name.slice(0, -5) : name;
  }

  #receiptPath(name: string): string {
    return join(
      this.#paths.outcomes,
      `${safeName(this.#requestId(name))}.json`,
    );
  }

  async #readReceipt(name: string): Promise<Receipt | null> {
    const text = await readTextIfExists(this.#receiptPath(name));
    if (text === null) return null;
    try {
      const value = JSON.parse(text);
      return isRecord(value) ? value as unknown as Receipt : null;
    } catch {
      return null;
    }
  }

  async #readRequestQuietly(
    name: string,
  ): Promise<Record<string, unknown> | null> {
    try {
      const info = await Deno.lstat(join(this.#paths.requests, name));
      if (!info.isFile || info.size > MAX_REQUEST_BYTES) return null;
      const value = JSON.parse(
        await Deno.readTextFile(join(this.#paths.requests, name)),
      );
      return isRecord(value) ? value : null;
    } catch {
      return null;
    }
  }

  async #removeRequest(name: string): Promise<boolean> {
    const path = join(this.#paths.requests, name);
    try {
      const info = await Deno.lstat(path);
      await Deno.remove(path, { recursive: info.isDirectory });
      return true;
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return true;
      await this.#warn(
        `delete:${name}`,
        `cannot remove request "${path}": ${errorText(error)}`,
      );
      return false;
    }
  }

  async #appendLog(
    entry: Omit<LogEntry, "v" | "at">,
  ): Promise<void> {
    const line: LogEntry = { v: 1, at: new Date().toISOString(), ...entry };
    await appendLine(this.#paths.log, JSON.stringify(line), { sync: true });
    if (entry.request_id) this.#noteLogged(entry.request_id, entry.outcome);
  }

  /** Reads and judges one request file. */
  async #decide(name: string): Promise<Decision> {
    const path = join(this.#paths.requests, name);
    const reject = (
      reason: string,
      command = "unknown",
      params: Record<string, unknown> = { file: name },
      author: string | null = null,
    ): Decision => ({
      command,
      params,
      author,
      outcome: "rejected",
      reason,
      prompt_id: this.#current,
      apply: null,
    });
    const info = await Deno.lstat(path);
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
    let value: unknown;
    try {
      value = JSON.parse(await Deno.readTextFile(path));
    } catch (error) {
      return reject(`not JSON: ${errorText(error)}`, "unparseable");
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
    const params = isRecord(value.params) ? value.params : {};
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
            request_id: this.#requestId(name),
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
      const used = (this.#delivered.get(this.#current) ?? 0) +
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
          request_id: this.#requestId(name),
          author: author ?? "unknown",
        },
      };
    }
    return reject(
      `unknown command "${command}": expected set_view or steer`,
      command,
      params,
      author,
    );
  }

  /** Consumes pending requests; returns the commands to apply, in order. */
  async #consume(): Promise<BoundaryCommand[]> {
    const commands: BoundaryCommand[] = [];
    let names: string[];
    try {
      names = await this.#pendingNames();
    } catch (error) {
      await this.#warn("list", `cannot list requests: ${errorText(error)}`);
      return commands;
    }
    for (const name of names) {
      const id = this.#requestId(name);
      try {
        if (this.#handled.has(id)) {
          await this.#removeRequest(name);
          continue;
        }
        if ((await this.#readReceipt(name)) !== null) {
          await this.#reconcileDecided();
          continue;
        }
        const decision = await this.#decide(name);
        this.#crashAt("request_decided");
        const receipt: Receipt = {
          request_id: id,
          run_id: this.#runId,
          command: decision.command,
          outcome: decision.outcome,
          reason: decision.reason,
          recorded_at: new Date().toISOString(),
        };
        try {
          await writeFileNoReplace(
            this.#receiptPath(name),
            JSON.stringify(receipt, null, 2) + "\n",
          );
        } catch (error) {
          // A receipt already there is the decision, made before a crash.
          if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
          continue;
        }
        this.#crashAt("receipt_written");
        await this.#appendLog({
          run_id: this.#runId,
          request_id: id,
          command: decision.command,
          params: decision.params,
          author: decision.author,
          outcome: decision.outcome,
          reason: decision.reason,
          prompt_id: decision.prompt_id,
          attempt: this.#snapshot.attempt,
        });
        this.#crashAt("log_written");
        this.#handled.add(id);
        await this.#removeRequest(name);
        this.#crashAt("request_deleted");
        if (decision.apply?.command === "steer") {
          const prompt = decision.apply.prompt_id;
          this.#pending.set(prompt, (this.#pending.get(prompt) ?? 0) + 1);
        }
        if (decision.apply) commands.push(decision.apply);
        this.#dirty = true;
      } catch (error) {
        // The request stays pending and is tried again at the next boundary.
        await this.#warn(
          `consume:${errorText(error)}`,
          `cannot process request "${name}": ${errorText(error)}`,
        );
        break;
      }
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
      await writeFileAtomic(
        this.#paths.snapshot,
        JSON.stringify(this.#snapshot, null, 2) + "\n",
      );
    } catch (error) {
      await this.#warn(
        "snapshot",
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
      steer_count: this.#delivered.get(info.prompt_id) ?? 0,
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
      await this.#warn("events", `cannot append events: ${errorText(error)}`);
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
   * An event boundary: consumes pending requests and returns the commands to
   * apply before the next event. The snapshot is written after any request,
   * and otherwise at most every 100 ms while events flow.
   */
  async boundary(_context: { idle: boolean }): Promise<BoundaryCommand[]> {
    if (this.#disabled || this.#closed) return [];
    const commands = await this.#consume();
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
      try {
        await ensurePrivateDir(this.#paths.interventions);
        await appendLine(
          join(this.#paths.interventions, `${safeName(prompt)}.jsonl`),
          JSON.stringify({
            at: new Date().toISOString(),
            prompt,
            attempt: result.attempt,
            author: steer.author,
            text: steer.text,
            lane: result.provider,
            delivery: result.delivery,
            run_id: this.#runId,
            request_id: steer.request_id,
          }),
          { sync: true },
        );
        this.#crashAt("steer_recorded");
      } catch (error) {
        recordError = errorText(error);
        await this.#warn("steer", `cannot record a steer: ${recordError}`);
      }
      this.#delivered.set(prompt, (this.#delivered.get(prompt) ?? 0) + 1);
      if (this.#snapshot.prompt_id === prompt) {
        this.#snapshot.steer_count = this.#delivered.get(prompt)!;
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
      await this.#warn("steer-log", `cannot log a steer: ${errorText(error)}`);
    }
    await this.#queueSnapshot();
  }

  /** The view changed: the snapshot shows it at once. */
  async viewChanged(view: ViewSettings): Promise<void> {
    if (this.#disabled) return;
    this.#snapshot.view = { ...view };
    await this.#queueSnapshot();
  }

  /**
   * The run ended: requests still pending are refused with a reason, and the
   * snapshot records how the run ended.
   */
  async close(status: RunStatus): Promise<void> {
    if (this.#disabled || this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    try {
      for (const name of await this.#pendingNames()) {
        const id = this.#requestId(name);
        if (this.#handled.has(id) || (await this.#readReceipt(name)) !== null) {
          await this.#reconcileDecided();
          await this.#removeRequest(name);
          continue;
        }
        const decision = await this.#decide(name);
        const late = decision.outcome === "rejected" ? decision : {
          ...decision,
          outcome: "rejected" as const,
          reason: `the run ended (${status}) before the request was applied`,
        };
        await writeFileNoReplace(
          this.#receiptPath(name),
          JSON.stringify(
            {
              request_id: id,
              run_id: this.#runId,
              command: late.command,
              outcome: late.outcome,
              reason: late.reason,
              recorded_at: new Date().toISOString(),
            },
            null,
            2,
          ) + "\n",
        ).catch((error) => {
          if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
        });
        await this.#appendLog({
          run_id: this.#runId,
          request_id: id,
          command: late.command,
          params: late.params,
          author: late.author,
          outcome: late.outcome,
          reason: late.reason,
          prompt_id: late.prompt_id,
          attempt: this.#snapshot.attempt,
        });
        await this.#removeRequest(name);
      }
    } catch (error) {
      await this.#warn(
        "close",
        `cannot settle late requests: ${errorText(error)}`,
      );
    }
    this.#current = null;
    this.#snapshot.status = status;
    await this.#queueSnapshot();
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
