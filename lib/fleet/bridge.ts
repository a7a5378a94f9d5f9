/**
 * The bridge (DESIGN §12): follows one run's state-root files like any
 * follower and publishes them to the fleet (events, audit-log lines, the
 * snapshot, the contracts), and hands the fleet's requests for the run to
 * its plane as request files. It never waits for the run and the run never
 * waits for it: a fleet that is down, slow or refusing is said once, waited
 * out with backoff, and caught up with when it is back.
 *
 * @module
 */

import { followedRunState } from "../control/followed_run_state.ts";
import { readSnapshotFile } from "../control/snapshot.ts";
import { controlPaths, type RunRef } from "../control/paths.ts";
import { bridgeEvents } from "./_bridge_events.ts";
import { bridgeLog } from "./_bridge_log.ts";
import { type BridgeFault, bridgeRequests } from "./_bridge_requests.ts";
import {
  type BridgeProgress,
  type BridgeRun,
  newProgress,
} from "./_bridge_run.ts";
import { bridgeSnapshots, ContractPuts } from "./_bridge_state.ts";
import { FleetSession } from "./_session.ts";
import type { FleetUrl } from "./fleet_url.ts";
import { type FleetRunName, runName } from "./fleet_names.ts";

export type { BridgeFault } from "./_bridge_requests.ts";
export type { BridgeProgress } from "./_bridge_run.ts";

/** What a bridge publishes, and where. */
export interface BridgeOptions {
  /** The fleet. */
  url: FleetUrl;
  /** A NATS creds file's text. */
  creds?: string;
  /** A CA file for `tls://` servers. */
  caFile?: string;
  /** The run's state root. */
  stateRoot: string;
  /** Its packet directory, for the contracts (`null`: the snapshot's). */
  packetDir: string | null;
  /** The run. */
  runId: string;
  /** The node name (sanitised). */
  node: string;
  /** The root name (sanitised). */
  root: string;
  /** Replicas of the streams and buckets it creates. */
  replicas: number;
  /** Where its one warning goes. */
  warn: (message: string) => void;
  /**
   * A sidecar (`fleet join`) rather than the runner's own bridge: it checks
   * that the runner lives before each heartbeat (a run whose runner died
   * goes silent, so the fleet reads it as unreachable).
   */
  sidecar?: boolean;
  /** A test's fault (`tests/_helpers/fault_main.ts`). */
  fault?: BridgeFault;
}

/** How a finished bridge left the fleet's copy of the run. */
export interface BridgeReport {
  /** Whether the fleet holds every event and the final snapshot. */
  complete: boolean;
  /** The last event `seq` the fleet acknowledged. */
  published_seq: number;
  /** The run's last event `seq` on disk. */
  last_seq: number;
}

/** A running bridge for one run. */
export class Bridge {
  readonly names: FleetRunName;
  readonly progress: BridgeProgress = newProgress();
  readonly #session: FleetSession;
  readonly #stop = new AbortController();
  readonly #finishing = new AbortController();
  readonly #ref: RunRef;
  readonly #loops: Promise<void>[];

  private constructor(options: BridgeOptions, packetDir: string | null) {
    this.names = runName(options.node, options.root, options.runId);
    this.#ref = { state_root: options.stateRoot, run_id: options.runId };
    this.#session = new FleetSession({
      url: options.url,
      ...(options.creds === undefined ? {} : { creds: options.creds }),
      ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
      name: `prompt_runner bridge ${this.names.key}`,
      timeoutMs: 3_000,
      discover: true,
      replicas: options.replicas,
      warn: options.warn,
    });
    const contracts = new ContractPuts(() => run);
    const ref = this.#ref;
    const run: BridgeRun = {
      ref,
      packetDir,
      names: this.names,
      session: this.#session,
      stop: this.#stop.signal,
      finishing: this.#finishing.signal,
      progress: this.progress,
      contractChanged: (promptId) => contracts.changed(promptId),
      runnerAlive: options.sidecar
        ? async () => (await followedRunState(ref)).state === "running"
        : () => Promise.resolve(true),
    };
    const report = (what: string) => (error: unknown) =>
      options.warn(`The fleet bridge's ${what} stopped: ${String(error)}`);
    const events = bridgeEvents(run).catch(report("events"));
    this.#loops = [
      events,
      bridgeLog(run).catch(report("log")),
      bridgeSnapshots(run, events).catch(report("snapshots")),
      contracts.all().then(() => contracts.loop()).catch(report("contracts")),
      bridgeRequests(run, this.#finishing.signal, options.fault ?? null)
        .catch(report("requests")),
    ];
  }

  /**
   * Starts a bridge (it connects in the background: this never waits for
   * the fleet).
   */
  static async start(options: BridgeOptions): Promise<Bridge> {
    let packetDir = options.packetDir;
    if (packetDir === null) {
      const snapshot = await readSnapshotFile(
        controlPaths(options.stateRoot).snapshot,
        options.stateRoot,
      ).catch(() => null);
      packetDir = snapshot?.packet_dir || null;
    }
    return new Bridge(options, packetDir);
  }

  /**
   * The run is over: publishes what is left and stops. Waits while the
   * fleet takes it; when the fleet is out of reach, waits for it until
   * `graceMs` after it was last reachable (not at all when it never was),
   * then stops with the copy incomplete (a later bridge, `prompt_runner
   * fleet join`, catches up from where it stopped).
   */
  async finish(options: { graceMs?: number } = {}): Promise<BridgeReport> {
    const graceMs = options.graceMs ?? 5_000;
    this.#finishing.abort();
    this.progress.lastProgress = Date.now();
    let done = false;
    let wake = () => {};
    Promise.all(this.#loops).then(() => {
      done = true;
      wake();
    });
    while (!done) {
      const now = Date.now();
      const lastConnected = this.#session.lastConnected;
      // Connected, yet nothing moved for as long: the fleet is refusing.
      const stuck = now - this.progress.lastProgress > graceMs;
      if (now - lastConnected > graceMs || stuck) break;
      // Woken as soon as the loops are done: a run's end waits for this.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return await this.#end();
  }

  /** Stops at once, whatever is left unpublished. */
  async stop(): Promise<BridgeReport> {
    this.#finishing.abort();
    return await this.#end();
  }

  async #end(): Promise<BridgeReport> {
    this.#stop.abort();
    await Promise.all(this.#loops);
    await this.#session.close();
    const snapshot = await readSnapshotFile(
      controlPaths(this.#ref.state_root).snapshot,
      this.#ref.state_root,
    ).catch(() => null);
    const lastSeq = snapshot?.run_id === this.#ref.run_id
      ? snapshot.last_seq
      : this.progress.readSeq;
    return {
      complete: this.progress.publishedSeq >= lastSeq &&
        this.progress.finalSnapshot,
      published_seq: this.progress.publishedSeq,
      last_seq: lastSeq,
    };
  }
}
