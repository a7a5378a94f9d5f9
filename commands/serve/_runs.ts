/**
 * The runs a dashboard shows: the TARGETs resolved to state roots, each
 * under a URL-safe key, their rows (the status rollup), their pages' data,
 * and one shared watch that notices snapshot changes and new runs; with a
 * fleet, its runs too (`_fleet_runs.ts`). Reads go through the client API
 * only: they never touch a run.
 *
 * @module
 */

import {
  DEFAULT_VIEW,
  type EventLine,
  listWorkspaces,
  locateTarget,
  rootName,
  type RunRef,
  type Snapshot,
  statusOf,
  type TargetLocation,
  type ViewSettings,
} from "../../mod.ts";
import type { FleetActionPlace, FleetRuns } from "./_fleet_runs.ts";
import type { RunPageModel, RunRow } from "./_model.ts";
import {
  localParts,
  pageModelOf,
  readSnapshot,
  readStoredEvents,
  rowOf,
  type RunParts,
  type WatchedRoot,
} from "./_run_model.ts";

export { rowOf, SHOWN_EVENTS, type WatchedRoot } from "./_run_model.ts";

/** How often the shared watch reads the watched roots' snapshots. */
const POLL_MS = 400;

/** How often, without TARGETs, the prepared workspaces are listed again. */
const RELIST_MS = 5_000;

/**
 * The key of a state root: its workspace's id, else the fleet's root name
 * of its path (`r-` + 12 hex of its SHA-256).
 */
export async function rootKey(
  stateRoot: string,
  workspaceId: string | null,
): Promise<string> {
  return workspaceId ?? await rootName(stateRoot, null);
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
    fleet: null,
  };
}

/** A change the shared watch saw: a root's snapshot (a new run's too). */
export type RootListener = (root: WatchedRoot, snapshot: Snapshot) => void;

/** Where an action applies: a run's reference and packet, or its fleet. */
export interface ActionPlace {
  /** The run (without a transport: it crosses to the action's worker). */
  ref: RunRef;
  /** Its packet on this machine, when known. */
  packet_dir: string | null;
  /** For a fleet run, how its worker reaches it; `null` on files. */
  fleet: FleetActionPlace | null;
}

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
  readonly #fleet: FleetRuns | null;

  private constructor(
    roots: WatchedRoot[],
    relist: boolean,
    cwd: string,
    fleet: FleetRuns | null,
  ) {
    for (const root of roots) this.#add(root);
    this.#relist = relist;
    this.#cwd = cwd;
    this.#fleet = fleet;
  }

  /**
   * Resolves TARGETs as the CLI does; with none and no fleet, the prepared
   * workspaces and the current directory's packet or state root (when it
   * is one). With a fleet, its runs are shown besides the TARGETs'.
   *
   * @throws {NotFoundError} for a TARGET that cannot be found.
   */
  static async open(
    targets: string[],
    cwd: string,
    fleet: FleetRuns | null = null,
  ): Promise<RunIndex> {
    const roots: WatchedRoot[] = [];
    for (const target of targets) {
      roots.push(
        await watchedRoot(await locateTarget(target, { cwd }), target),
      );
    }
    const defaults = targets.length === 0 && fleet === null;
    const index = new RunIndex(roots, defaults, cwd, fleet);
    if (defaults) await index.#listDefaults();
    return index;
  }

  /** The fleet's runs, when the dashboard shows a fleet. */
  get fleet(): FleetRuns | null {
    return this.#fleet;
  }

  /** `text` with the fleet's secrets masked (for an error a page shows). */
  redact(text: string): string {
    return this.#fleet?.redact(text) ?? text;
  }

  /** A run's reference for the client API (a fleet run's with its transport). */
  refOf(root: WatchedRoot, runId: string): RunRef {
    if (root.fleet !== null) return this.#fleet!.ref(root, runId);
    return { state_root: root.state_root, run_id: runId };
  }

  /** Where an action on a run applies. */
  async actionPlace(root: WatchedRoot, runId: string): Promise<ActionPlace> {
    if (root.fleet !== null) {
      return {
        ref: { state_root: root.state_root, run_id: runId },
        packet_dir: null,
        fleet: this.#fleet!.actionPlace(root, runId),
      };
    }
    const snapshot = await this.snapshotOf(root);
    return {
      ref: { state_root: root.state_root, run_id: runId },
      packet_dir: root.packet_dir ?? snapshot?.packet_dir ?? null,
      fleet: null,
    };
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
        fleet: null,
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

  /** The watched state roots, in the order they were named. */
  roots(): WatchedRoot[] {
    return [...this.#roots.values()];
  }

  /** The root (or fleet home) under a key, or `undefined`. */
  root(key: string): WatchedRoot | undefined {
    return this.#roots.get(key) ?? this.#fleet?.root(key);
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
   * per change, however many browsers ask. A fleet run's row is the one
   * the fleet watch read last.
   */
  async sharedRow(root: WatchedRoot, runId?: string): Promise<RunRow | null> {
    if (root.fleet !== null) {
      return runId === undefined ? null : await this.#fleet!.row(root, runId);
    }
    const seen = this.#seen.get(root.key) ?? "";
    const cached = this.#rowCache.get(root.key);
    if (cached !== undefined && cached.snapshot === seen) return cached.row;
    const row = this.row(root);
    this.#rowCache.set(root.key, { snapshot: seen, row });
    row.catch(() => this.#rowCache.delete(root.key));
    return await row;
  }

  /** Every root's row, then the fleet's; a root that cannot be read is left out. */
  async rows(): Promise<RunRow[]> {
    const rows: RunRow[] = [];
    for (const root of this.roots()) {
      const row = await this.row(root).catch(() => null);
      if (row !== null) rows.push(row);
    }
    if (this.#fleet !== null) rows.push(...await this.#fleet.rows());
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
    const unwatchFleet = this.#fleet?.watch(listener);
    if (this.#timer === null && (this.#roots.size > 0 || this.#relist)) {
      this.#timer = setInterval(() => void this.#poll(), POLL_MS);
      void this.#poll();
    }
    return () => {
      unwatchFleet?.();
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
    if (root.fleet !== null) return await this.#fleet!.hasRun(root, runId);
    const current = await readSnapshot(root.state_root);
    if (current === null) return false;
    if (current.run_id === runId) return true;
    const ref = { state_root: root.state_root, run_id: runId };
    return (await this.readEvents(ref, 1, 1).catch(() => [])).length > 0;
  }

  /**
   * A root's current snapshot, or `null`; for a fleet home, the snapshot of
   * its run `runId`.
   */
  async snapshotOf(
    root: WatchedRoot,
    runId?: string,
  ): Promise<Snapshot | null> {
    if (root.fleet !== null) {
      return runId === undefined
        ? null
        : await this.#fleet!.snapshotOf(root, runId);
    }
    return await readSnapshot(root.state_root);
  }

  /** The view a run renders with now (the default once it is not current). */
  async runView(root: WatchedRoot, runId: string): Promise<ViewSettings> {
    const current = await this.snapshotOf(root, runId);
    return current !== null && current.run_id === runId
      ? current.view
      : { ...DEFAULT_VIEW };
  }

  /** Stops the shared watches. */
  close(): void {
    this.#listeners.clear();
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#fleet?.close();
  }

  /** A run's snapshot as its reference names it (a fleet run's own). */
  async #snapshotFor(ref: RunRef): Promise<Snapshot | null> {
    if (ref.transport === undefined) return await readSnapshot(ref.state_root);
    const [node, root] = ref.state_root.slice("fleet:".length).split("/");
    const home = this.#fleet?.root(`fleet:${node}.${root}`);
    return home === undefined
      ? null
      : await this.#fleet!.snapshotOf(home, ref.run_id);
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
    return await readStoredEvents(ref, await this.#snapshotFor(ref), from, to);
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

  /** What a run page shows that depends on where the run lives. */
  async parts(
    root: WatchedRoot,
    runId: string,
    events: EventLine[],
  ): Promise<RunParts | null> {
    if (root.fleet !== null) {
      return await this.#fleet!.parts(root, runId, events);
    }
    return await localParts((r) => this.row(r), root, runId, events);
  }
}
