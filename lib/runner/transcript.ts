/**
 * A per-attempt transcript in the state root (`logs/<run>/<prompt>-attempt-N.log`):
 * the rendered run without escape codes, appended in batches.
 *
 * @module
 */

import { join, relative } from "node:path";
import { type RenderSink, transcriptSink } from "../render/sinks.ts";
import { LinkRefusedError } from "../shared/errors.ts";
import {
  createNewFile,
  ensurePrivateDir,
  openAppend,
  writeAll,
} from "../shared/files.ts";
import { environmentFailure } from "./_environment_failure.ts";
import type { AttemptRecord } from "../status/state_file.ts";
import { STATE_ROOT_NAMES } from "../shared/state_root_layout.ts";

/** Buffered text is written once this many characters wait. */
const FLUSH_CHARS = 64 * 1024;
/** …or this long after the first of them arrived. */
const FLUSH_MS = 50;

const encoder = new TextEncoder();

/** Where and what a transcript is opened for. */
export interface TranscriptInfo {
  /** The state root the transcript lives in. */
  root: string;
  /** The run's id. */
  runId: string;
  /** The prompt's id. */
  promptId: string;
  /** The attempt record; its `transcript` is set to the file's path. */
  record: AttemptRecord;
  /** The text sent to the agent, kept in the header. */
  text: string;
  /** Runs file work, moving a link found on the way aside. */
  guardLinks<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * An open transcript. Text is buffered and appended once per batch (64 KiB,
 * or 50 ms after the batch began, or on `flush()`/`close()`): one write per
 * batch instead of one per event. A failed write surfaces on the next call.
 */
export class Transcript {
  /** The sink the renderer's text goes to (escape codes stripped). */
  readonly sink: RenderSink;
  readonly #file: Deno.FsFile;
  readonly #path: string;
  #chunks: string[] = [];
  #chars = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();
  #failure: unknown = null;

  private constructor(file: Deno.FsFile, path: string) {
    this.#file = file;
    this.#path = path;
    this.sink = transcriptSink((text) => this.#append(text));
  }

  /**
   * Opens (never truncates, never follows a link) the attempt's transcript
   * and writes its header at once.
   *
   * @throws {EnvironmentError} when the file cannot be written.
   */
  static async open(info: TranscriptInfo): Promise<Transcript> {
    const { root, runId, promptId, record } = info;
    const dir = join(root, STATE_ROOT_NAMES.logs, runId);
    const path = join(dir, `${promptId}-attempt-${record.attempt}.log`);
    record.transcript = relative(root, path);
    const file = await info.guardLinks(async () => {
      await ensurePrivateDir(dir, { within: root });
      try {
        // Never truncates, never follows a link: a transcript is kept whole.
        return await createNewFile(path, { within: root });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
        const existing = await Deno.lstat(path);
        if (existing.isSymlink) throw new LinkRefusedError(path);
        return await openAppend(path, { within: root });
      }
    }).catch((error) => {
      throw environmentFailure(error, path);
    });
    const transcript = new Transcript(file, path);
    // Through the sink: the prompt text reaches the file without escapes too.
    await transcript.sink.text(
      [
        `run ${runId}  prompt ${promptId}  attempt ${record.attempt} (${record.mode})`,
        `started ${record.started_at}`,
        "--- prompt text ---",
        info.text.trimEnd(),
        "--- events ---",
        "",
      ].join("\n"),
    );
    await transcript.flush();
    return transcript;
  }

  /** Writes what waits. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#chunks.length > 0) {
      const bytes = encoder.encode(this.#chunks.join(""));
      this.#chunks = [];
      this.#chars = 0;
      this.#writing = this.#writing.then(() =>
        writeAll(this.#file, bytes).catch((error) => {
          throw environmentFailure(error, this.#path);
        })
      );
    }
    return this.#writing;
  }

  /** Writes what waits, syncs and closes the file. */
  async close(): Promise<void> {
    try {
      await this.flush();
      this.#rethrow();
      await this.#file.sync().catch(() => {});
    } finally {
      this.#file.close();
    }
  }

  #append(text: string): Promise<void> {
    this.#rethrow();
    this.#chunks.push(text);
    this.#chars += text.length;
    if (this.#chars >= FLUSH_CHARS) return this.flush();
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch((error) => this.#failure ??= error);
    }, FLUSH_MS);
    return Promise.resolve();
  }

  #rethrow(): void {
    if (this.#failure === null) return;
    const failure = this.#failure;
    this.#failure = null;
    throw failure;
  }
}
