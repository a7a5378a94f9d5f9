/**
 * A fleet's runs on the dashboard (`serve --fleet URL`, DESIGN §12): every
 * run of the fleet (or those the fleet TARGETs named), each run page under
 * its home's key (`fleet:<node>.<root>`), its row from its snapshot in the
 * fleet, and one shared watch that reads the fleet's runs and tells each
 * change. Everything goes through the fleet client (`mod.ts`): a fleet run
 * is read and steered with the client API, its transport the fleet's.
 *
 * @module
 */

import {
  contract,
  type ContractView,
  errorText,
  type EventLine,
  fleetAddress,
  type FleetClient,
  type FleetRun,
  type FleetRunName,
  type FleetUrl,
  maskFleetSecrets,
  type RunRef,
  type Snapshot,
} from "../../mod.ts";
import type { RunRow } from "./_model.ts";
import type { RunParts, WatchedRoot } from "./_run_model.ts";

/** How often the shared watch reads the fleet's runs. */
const POLL_MS = 1_000;

/** How long a read of the fleet's runs may wait before it is warned about. */
const READ_MS = 5_000;

/** How old a read of the fleet's runs may be when a page asks for them. */
const FRESH_MS = 1_000;

/** What names a fleet home in a dashboard URL: never a workspace id. */
const KEY = /^fleet:([A-Za-z0-9_-]{1,64})\.([A-Za-z0-9_-]{1,64})$/;

/**
 * The fleet as `serve` was told to reach it: what an action's worker needs
 * to reach it again (plain data: it crosses to the worker).
 */
export interface FleetChoiceData {
  /** The URL as given (its secrets included: never shown). */
  url: string;
  /** Its servers, credentials and masked form. */
  parsed: FleetUrl;
  /** A NATS creds file, or `null`. */
  creds_file: string | null;
  /** A CA certificate file, or `null`. */
  ca_file: string | null;
}

/** A fleet run an action applies to, as its worker reaches it. */
export interface FleetActionPlace {
  /** The fleet. */
  choice: FleetChoiceData;
  /** The run's names. */
  run: FleetRunName;
}

/** The fleet did not answer a read a page needs (its secrets masked). */
export class FleetUnanswered extends Error {
  override name = "FleetUnanswered";
}

/** A change the watch saw: a fleet run's snapshot (a new run's too). */
export type FleetListener = (root: WatchedRoot, snapshot: Snapshot) => void;

/** What `serve` opened: the client, the fleet, the runs it may show. */
export interface FleetOptions {
  /** The open client. */
  client: FleetClient;
  /** How the fleet was named. */
  choice: FleetChoiceData;
  /** The keys of the runs the fleet TARGETs named, or `null`: every run. */
  only: ReadonlySet<string> | null;
  /** Told once when the fleet stops answering the watch, and when it answers again (masked). */
  warn?: (line: string) => void;
}

/** The fleet runs a dashboard shows. */
export class FleetRuns {
  /** The open client (closed by whoever opened it). */
  readonly client: FleetClient;
  readonly #choice: FleetChoiceData;
  readonly #only: ReadonlySet<string> | null;
  readonly #warn: (line: string) => void;
  readonly #secrets: string[];
  #runs = new Map<string, FleetRun>();
  #readAt = -Infinity;
  #reading: Promise<void> | null = null;
  #failing = false;
  #listeners = new Set<FleetListener>();
  #seen = new Map<string, string>();
  /** Whether the watch's next read is its first (its baseline). */
  #baseline = true;
  #timer: ReturnType<typeof setInterval> | null = null;

  /** The runs of the fleet `options.client` reaches. */
  constructor(options: FleetOptions) {
    this.client = options.client;
    this.#choice = options.choice;
    this.#only = options.only;
    this.#warn = options.warn ?? (() => {});
    const url = options.choice.parsed;
    this.#secrets = [url.pass, url.token].filter((s): s is string =>
      s !== undefined && s.length >= 3
    );
  }

  /** The fleet's address, its secrets masked. */
  get shown(): string {
    return this.client.shown;
  }

  /** `text` with the fleet's secrets masked, whatever quotes them. */
  redact(text: string): string {
    let safe = maskFleetSecrets(text);
    for (const secret of this.#secrets) safe = safe.replaceAll(secret, "***");
    return safe;
  }

  /** The home a URL key names, or `undefined`. */
  root(key: string): WatchedRoot | undefined {
    const match = KEY.exec(key);
    return match === null ? undefined : homeOf(match[1]!, match[2]!);
  }

  #allowed(key: string): boolean {
    return this.#only === null || this.#only.has(key);
  }

  #name(root: WatchedRoot, runId: string): FleetRunName {
    const { node, root: name } = root.fleet!;
    return { node, root: name, run_id: runId, key: `${node}.${name}.${runId}` };
  }

  /** A fleet run's reference, for the client API (its transport the fleet's). */
  ref(root: WatchedRoot, runId: string): RunRef {
    return this.client.ref(this.#name(root, runId));
  }

  /** Where an action on a fleet run applies. */
  actionPlace(root: WatchedRoot, runId: string): FleetActionPlace {
    return { choice: this.#choice, run: this.#name(root, runId) };
  }

  /** Reads the fleet's runs again (one read at a time). */
  async #read(): Promise<void> {
    this.#reading ??= (async () => {
      // A fleet that went away may leave a read waiting, not failing.
      const slow = setTimeout(
        () => this.#failed(`no answer within ${READ_MS / 1000} s`),
        READ_MS,
      );
      try {
        const runs = await this.client.runs();
        this.#runs = new Map(
          runs.filter((run) => this.#allowed(run.key)).map((run) => [
            run.key,
            run,
          ]),
        );
        this.#readAt = Date.now();
        if (this.#failing) {
          this.#warn(`the fleet at ${this.shown} answers again`);
        }
        this.#failing = false;
      } catch (error) {
        this.#failed(this.redact(errorText(error)));
      } finally {
        clearTimeout(slow);
        this.#reading = null;
      }
    })();
    await this.#reading;
  }

  /** Warns once that the fleet does not answer, until it answers again. */
  #failed(detail: string): void {
    if (!this.#failing) {
      this.#warn(
        `warning: cannot read the runs of the fleet at ${this.shown}: ${detail}; the dashboard shows what it read last, and tries again`,
      );
    }
    this.#failing = true;
  }

  /**
   * Reads the fleet's runs again, waiting for the answer no longer than
   * {@linkcode READ_MS}: a page of a fleet that went away shows what was
   * read last.
   */
  async #readWithin(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.#read(),
      new Promise((resolve) => timer = setTimeout(resolve, READ_MS)),
    ]);
    clearTimeout(timer);
  }

  /** The fleet's runs, read within the last second (else as last read). */
  async runs(): Promise<FleetRun[]> {
    if (Date.now() - this.#readAt >= FRESH_MS) await this.#readWithin();
    return [...this.#runs.values()];
  }

  /** A fleet run as last read (read again when it is new), or `null`. */
  async run(root: WatchedRoot, runId: string): Promise<FleetRun | null> {
    const key = this.#name(root, runId).key;
    if (!this.#allowed(key)) return null;
    if (!this.#runs.has(key)) await this.#readWithin();
    return this.#runs.get(key) ?? null;
  }

  /** Whether the fleet holds the run (and the dashboard shows it). */
  async hasRun(root: WatchedRoot, runId: string): Promise<boolean> {
    return await this.snapshotOf(root, runId) !== null;
  }

  /** A fleet run's snapshot as the fleet holds it now, or `null`. */
  async snapshotOf(root: WatchedRoot, runId: string): Promise<Snapshot | null> {
    const key = this.#name(root, runId).key;
    if (!this.#allowed(key)) return null;
    try {
      return (await this.client.transport.entry(key))?.snapshot ?? null;
    } catch (error) {
      throw new FleetUnanswered(
        `The fleet at ${this.shown} did not answer: ${
          this.redact(errorText(error))
        }`,
      );
    }
  }

  /**
   * A fleet run page's parts: its row and snapshot as the fleet holds them,
   * the prompts it selected (named as its events name them), and their
   * contracts as the fleet holds them (its packet is on its machine).
   *
   * @returns The parts, or `null` when the dashboard shows no such run.
   */
  async parts(
    root: WatchedRoot,
    runId: string,
    events: EventLine[],
  ): Promise<RunParts | null> {
    const run = await this.run(root, runId);
    if (run === null) return null;
    const snapshot = await this.snapshotOf(root, runId) ?? run.snapshot;
    const names = new Map<string, string | null>();
    const completed = new Set<string>();
    for (const { event } of events) {
      if (!event.prompt_id) continue;
      if (event.type === "prompt_completed") completed.add(event.prompt_id);
      if (event.type !== "prompt_started") continue;
      const name = event.data?.name;
      names.set(event.prompt_id, typeof name === "string" ? name : null);
    }
    if (snapshot.prompt_id !== null && !names.get(snapshot.prompt_id)) {
      names.set(snapshot.prompt_id, snapshot.prompt_name);
    }
    const prompts = (snapshot.prompt_ids ?? [...names.keys()]).map((id) => ({
      id,
      name: names.get(id) ?? null,
    }));
    const target = {
      transport: this.client.transport,
      state_root: fleetAddress(run),
    };
    const contracts: ContractView[] = [];
    for (const prompt of prompts) {
      const view = await contract(target, prompt.id).catch(() => null);
      if (view !== null) contracts.push(view);
    }
    const row = fleetRowOf(run);
    // The page has the run's events: what the fleet's row cannot know.
    const last = Date.parse(events.at(-1)?.event.at ?? "");
    return {
      row: {
        ...row,
        progress: { ...row.progress, completed: completed.size },
        last_event_age_ms: Number.isFinite(last) ? Date.now() - last : null,
      },
      snapshot,
      packet_dir: null,
      prompts,
      contracts,
    };
  }

  /** Every run's row, as last read. */
  async rows(): Promise<RunRow[]> {
    return (await this.runs()).map(fleetRowOf);
  }

  /** A run's row as last read, or `null`. */
  async row(root: WatchedRoot, runId: string): Promise<RunRow | null> {
    const run = await this.run(root, runId);
    return run === null ? null : fleetRowOf(run);
  }

  /**
   * Calls `listener` with each run's snapshot whenever the fleet's copy
   * changes, or its run goes unreachable (a new run's first one included).
   * One watch serves every listener, and runs only while there is one.
   *
   * @returns A function that removes the listener.
   */
  watch(listener: FleetListener): () => void {
    this.#listeners.add(listener);
    if (this.#timer === null) {
      this.#timer = setInterval(() => void this.#poll(), POLL_MS);
      void this.#poll();
    }
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.close();
    };
  }

  async #poll(): Promise<void> {
    if (this.#reading !== null) return;
    await this.#read();
    for (const run of this.#runs.values()) {
      const text = `${run.status}\n${JSON.stringify(run.snapshot)}`;
      const before = this.#seen.get(run.key);
      this.#seen.set(run.key, text);
      // The first read is the baseline; a run that appears after it is news.
      if (before === text || (before === undefined && this.#baseline)) {
        continue;
      }
      const root = homeOf(run.node, run.root);
      for (const listener of [...this.#listeners]) {
        try {
          listener(root, run.snapshot);
        } catch {
          // A listener's failure is its own.
        }
      }
    }
    this.#baseline = false;
  }

  /** Stops the shared watch. */
  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#seen.clear();
    this.#baseline = true;
  }
}

/** A fleet home as the dashboard watches it. */
function homeOf(node: string, root: string): WatchedRoot {
  const address = `fleet:${node}/${root}`;
  return {
    key: `fleet:${node}.${root}`,
    target: address,
    state_root: address,
    packet_dir: null,
    workspace_id: null,
    fleet: { node, root },
  };
}

/** A fleet run's runs-page row, from what the fleet holds of it. */
export function fleetRowOf(run: FleetRun): RunRow {
  const s = run.snapshot;
  const selected = s.prompt_ids?.length ?? null;
  return {
    root: `fleet:${run.node}.${run.root}`,
    run: run.run_id,
    target: fleetAddress(run),
    packet: s.packet || null,
    status: run.status === "blocked" ? "failed" : run.status,
    // The fleet has the snapshot, not the state: all done is known, no more.
    progress: {
      completed: run.status === "completed" ? selected : null,
      selected,
    },
    current: { id: s.prompt_id, name: s.prompt_name },
    attempt: { number: s.attempt, mode: s.mode, detail: null },
    elapsed_ms: s.elapsed_ms,
    input_tokens: s.input_tokens,
    output_tokens: s.output_tokens,
    cost_usd: s.cost_usd,
    last_event_age_ms: null,
    runner: run.status === "running"
      ? "alive"
      : run.status === "unreachable"
      ? "unreachable"
      : "none",
    attention: s.attention,
  };
}
