/**
 * The runs a dashboard shows: the TARGETs resolved to state roots, each
 * under a URL-safe key, their rows (the status rollup), their pages' data,
 * and one shared watch that notices snapshot changes and new runs. Reads go
 * through the client API only: they never touch a run.
 *
 * @module
 */

import {
  DEFAULT_VIEW,
  type EventLine,
  eventLineBatches,
  listWorkspaces,
  locateTarget,
  NotFoundError,
  type RunRef,
  type Snapshot,
  statusOf,
  type TargetLocation,
  type ViewSettings,
} from "../../mod.ts";
import type { RunPageModel, RunRow } from "./_model.ts";
import {
  pageModelOf,
  readSnapshot,
  rowOf,
  type WatchedRoot,
} from "./_run_model.ts";

export { rowOf, SHOWN_EVENTS, type WatchedRoot } from "./_run_model.ts";

/** How often the shared watch reads the watched roots' snapshots. */
const POLL_MS = 400;

/** How often, without TARGETs, the prepared workspaces are listed again. */
const RELIST_MS = 5_000;

/** The key of a state root (DESIGN: workspace id, else `r-` + 12 hex). */
export async function rootKey(
  stateRoot: string,
  workspaceId: string | null,
): Promise<string> {
  if (workspaceId !== null) return workspaceId;
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(stateRoot),
  );
  const hex = [...new Uint8Array(digest)].map((b) =>
    b.toString(16).padStart(2, "0")
  ).join("");
  return `r-${hex.slice(0, 12)}`;
}

async function watchedRoot(
  location: TargetLocation,
  target: string,
): Promise<WatchedRoot> {
  return {
    key: await rootKey(location.state_root, location.workspace_id),
    target,
    state_root: location.state_root,
    packet_dir: location.packet_dir,
    workspace_id: location.workspace_id,
  };
}

/** A change the shared watch saw: a root's snapshot (a new run's too). */
export type RootListener = (root: WatchedRoot, snapshot: Snapshot) => void;

/** The runs of the TARGETs a dashboard was started with. */
export class RunIndex {
  #roots = new Map<string, WatchedRoot>();
  #listeners = new Set<RootListener>();
  #seen = new Map<string, string>();
  #rowCache = new Map<string, { snapshot: string; row: Promise<RunRow> }>();
  #timer: ReturnType<typeof setInterval> | null = null;
  #lastList = 0;
  #polling = false;
  readonly #relist: boolean;
  readonly #cwd: string;

  private constructor(roots: WatchedRoot[], relist: boolean, cwd: string) {
    for (const root of roots) this.#add(root);
    this.#relist = relist;
    this.#cwd = cwd;
  }

  /**
   * Resolves TARGETs as the CLI does; with none, the prepared workspaces
   * and the current directory's packet or state root (when it is one).
   *
   * @throws {NotFoundError} for a TARGET that cannot be found.
   */
  static async open(targets: string[], cwd: string): Promise<RunIndex> {
    const roots: WatchedRoot[] = [];
    for (const target of targets) {
      roots.push(
        await watchedRoot(await locateTarget(target, { cwd }), target),
      );
    }
    const index = new RunIndex(roots, targets.length === 0, cwd);
    if (targets.length === 0) await index.#listDefaults();
    return index;
  }

  #add(root: WatchedRoot): void {
    for (const known of this.#roots.values()) {
      if (known.state_root === root.state_root) return;
    }
    this.#roots.set(root.key, root);
  }

  async #listDefaults(): Promise<void> {
    this.#lastList = Date.now();
    for (const entry of await listWorkspaces().catch(() => [])) {
      if (entry.problem !== null) continue;
      this.#add({
        key: entry.id,
        target: entry.id,
        state_root: entry.state_root,
        packet_dir: entry.packet,
        workspace_id: entry.id,
      });
    }
    const here = await locateTarget(undefined, { cwd: this.#cwd }).catch(() =>
      null
    );
    if (here !== null) {
      this.#add(
        await watchedRoot(here, here.workspace_id ?? here.packet_dir ?? "."),
      );
    }
  }

  /** The watched roots, in the order they were named. */
  roots(): WatchedRoot[] {
    return [...this.#roots.values()];
  }

  /** The root under a key, or `undefined`. */
  root(key: string): WatchedRoot | undefined {
    return this.#roots.get(key);
  }

  /** The row of a root's newest run. */
  async row(root: WatchedRoot): Promise<RunRow> {
    const snapshot = await readSnapshot(root.state_root);
    const rollup = await statusOf({
      state_root: root.state_root,
      packet_dir: root.packet_dir,
      workspace_id: root.workspace_id,
      target: root.target,
    });
    return rowOf(root, rollup, snapshot);
  }

  /**
   * A root's row for the snapshot the shared watch saw last: computed once
   * per change, however many browsers ask.
   */
  async sharedRow(root: WatchedRoot): Promise<RunRow> {
    const seen = this.#seen.get(root.key) ?? "";
    const cached = this.#rowCache.get(root.key);
    if (cached !== undefined && cached.snapshot === seen) return cached.row;
    const row = this.row(root);
    this.#rowCache.set(root.key, { snapshot: seen, row });
    row.catch(() => this.#rowCache.delete(root.key));
    return await row;
  }

  /** Every root's row; a root that cannot be read is left out. */
  async rows(): Promise<RunRow[]> {
    const rows: RunRow[] = [];
    for (const root of this.roots()) {
      const row = await this.row(root).catch(() => null);
      if (row !== null) rows.push(row);
    }
    return rows;
  }

  /**
   * Calls `listener` with each root's snapshot whenever it changes (a new
   * run's first snapshot included). One watch serves every listener, and
   * runs only while there is one.
   *
   * @returns A function that removes the listener.
   */
  watch(listener: RootListener): () => void {
    this.#listeners.add(listener);
    if (this.#timer === null) {
      this.#timer = setInterval(() => void this.#poll(), POLL_MS);
      void this.#poll();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0 && this.#timer !== null) {
        clearInterval(this.#timer);
        this.#timer = null;
        this.#seen.clear();
        this.#rowCache.clear();
      }
    };
  }

  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      if (this.#relist && Date.now() - this.#lastList >= RELIST_MS) {
        await this.#listDefaults();
      }
      for (const root of this.roots()) {
        const snapshot = await readSnapshot(root.state_root);
        const text = JSON.stringify(snapshot);
        const before = this.#seen.get(root.key);
        this.#seen.set(root.key, text);
        // The first read is the baseline; a root's first run is a change.
        if (before === undefined || before === text || snapshot === null) {
          continue;
        }
        for (const listener of [...this.#listeners]) {
          try {
            listener(root, snapshot);
          } catch {
            // A listener's failure is its own.
          }
        }
      }
    } finally {
      this.#polling = false;
    }
  }

  /** Whether a root holds a run: its current one, or one with events. */
  async hasRun(root: WatchedRoot, runId: string): Promise<boolean> {
    const current = await readSnapshot(root.state_root);
    if (current === null) return false;
    if (current.run_id === runId) return true;
    const ref = { state_root: root.state_root, run_id: runId };
    return (await this.readEvents(ref, 1, 1).catch(() => [])).length > 0;
  }

  /** A root's current snapshot, or `null`. */
  async snapshotOf(root: WatchedRoot): Promise<Snapshot | null> {
    return await readSnapshot(root.state_root);
  }

  /** The view a run renders with now (the default once it is not current). */
  async runView(root: WatchedRoot, runId: string): Promise<ViewSettings> {
    const current = await readSnapshot(root.state_root);
    return current !== null && current.run_id === runId
      ? current.view
      : { ...DEFAULT_VIEW };
  }

  /** Stops the shared watch. */
  close(): void {
    this.#listeners.clear();
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /**
   * Reads a run's stored events from `from` up to `to` (inclusive), without
   * waiting for events not written yet: a live run's stream is read up to
   * `to`, or up to what its snapshot counts when `to` is `null`.
   *
   * @throws {NotFoundError} when the state root has no record of the run.
   */
  async readEvents(
    ref: RunRef,
    from: number,
    to: number | null,
  ): Promise<EventLine[]> {
    const current = await readSnapshot(ref.state_root);
    const live = current !== null && current.run_id === ref.run_id &&
      current.status === "running";
    const limit = to ?? (live ? current.last_seq : Infinity);
    const lines: EventLine[] = [];
    if (limit < from) return lines;
    const abort = new AbortController();
    // A range past what is written ends the read instead of waiting for it.
    const timer = setTimeout(() => abort.abort(), live ? 1_500 : 10_000);
    try {
      outer: for await (
        const batch of eventLineBatches(ref, { from, signal: abort.signal })
      ) {
        for (const line of batch) {
          if (line.event.seq > limit) break outer;
          lines.push(line);
        }
        if ((lines.at(-1)?.event.seq ?? 0) >= limit) break;
      }
    } catch (error) {
      // A run whose runner is gone still has its events to show.
      if (error instanceof NotFoundError) throw error;
    } finally {
      clearTimeout(timer);
    }
    return lines;
  }

  /**
   * Everything a run page shows.
   *
   * @returns The model, or `null` when the root holds no such run.
   */
  async pageModel(
    root: WatchedRoot,
    runId: string,
    query: URLSearchParams,
  ): Promise<RunPageModel | null> {
    return await pageModelOf(this, root, runId, query);
  }
}
