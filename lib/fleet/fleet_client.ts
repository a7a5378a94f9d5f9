/**
 * A client of a fleet: its runs (what `fleet ls` lists), fleet TARGETs
 * resolved to runs, and the transport that reads and steers them.
 *
 * @module
 */

import type { RunRef } from "../control/paths.ts";
import type { Snapshot } from "../control/snapshot.ts";
import { NotFoundError, UsageError } from "../shared/errors.ts";
import type { FleetLink } from "./_link.ts";
import { openLink } from "./_load.ts";
import { type RunEntry, scanRuns } from "./_fleet_scan.ts";
import {
  fleetAddress,
  type FleetRunName,
  fleetTargetParts,
  matchesTarget,
  parseRunKey,
} from "./fleet_names.ts";
import { FleetTransport, STALE_MS } from "./fleet_transport.ts";
import { type FleetStatus, fleetStatus } from "./fleet_status.ts";
import { type FleetUrl, parseFleetUrl, readCredsFile } from "./fleet_url.ts";

/** How to reach a fleet. */
export interface FleetClientOptions {
  /** The fleet's URL (`nats://…` or `tls://…`), or it parsed. */
  url: string | FleetUrl;
  /** A NATS creds file to authenticate with. */
  credsFile?: string;
  /** A CA certificate file for `tls://` servers signed by a private CA. */
  caFile?: string;
  /** How long the connection may take, in milliseconds (default 3000). */
  timeoutMs?: number;
  /** When a silent running run reads as unreachable (default 10 000 ms). */
  staleMs?: number;
  /** How long an amendment may wait to be recorded (default 30 000 ms). */
  amendTimeoutMs?: number;
}

/** A run of the fleet, as `fleet ls` lists it. */
export interface FleetRun extends FleetRunName {
  /** The packet's name. */
  packet: string;
  /** Its status, or `unreachable` when it runs but went silent. */
  status: Snapshot["status"] | "unreachable";
  /** Its current (or last) prompt. */
  prompt_id: string | null;
  /** Its attempt number. */
  attempt: number | null;
  /** When the fleet last heard of it (ISO 8601). */
  updated_at: string;
  /** Its latest snapshot. */
  snapshot: Snapshot;
}

/** A connection to a fleet, for clients (see {@linkcode openFleetClient}). */
export class FleetClient implements AsyncDisposable {
  /** The fleet's address, its secrets masked. */
  readonly shown: string;
  /** The transport the client API reaches the fleet's runs through. */
  readonly transport: FleetTransport;
  readonly #link: FleetLink;
  readonly #staleMs: number;

  /** A client over an open connection (see {@linkcode openFleetClient}). */
  constructor(link: FleetLink, url: FleetUrl, options: FleetClientOptions) {
    this.#link = link;
    this.shown = url.shown;
    this.#staleMs = options.staleMs ?? STALE_MS;
    this.transport = new FleetTransport(link, {
      shown: url.shown,
      staleMs: this.#staleMs,
      ...(options.amendTimeoutMs === undefined
        ? {}
        : { amendTimeoutMs: options.amendTimeoutMs }),
    });
  }

  #runOf(entry: RunEntry): FleetRun | null {
    const name = parseRunKey(entry.key);
    if (name === null) return null;
    const snapshot = entry.snapshot;
    const silent = snapshot.status === "running" &&
      Date.now() - entry.time > this.#staleMs;
    return {
      ...name,
      packet: snapshot.packet,
      status: silent ? "unreachable" : snapshot.status,
      prompt_id: snapshot.prompt_id,
      attempt: snapshot.attempt,
      updated_at: new Date(entry.time).toISOString(),
      snapshot,
    };
  }

  /** Every run of the fleet, by node, root and start. */
  async runs(): Promise<FleetRun[]> {
    const runs = (await scanRuns(this.#link, ">"))
      .map((entry) => this.#runOf(entry))
      .filter((run): run is FleetRun => run !== null);
    return runs.sort((a, b) =>
      a.node.localeCompare(b.node) || a.root.localeCompare(b.root) ||
      a.snapshot.run_started_at.localeCompare(b.snapshot.run_started_at) ||
      a.run_id.localeCompare(b.run_id)
    );
  }

  /**
   * The run a fleet TARGET names: `fleet:<node>/<root>/<run_id>`, or a
   * suffix of one that exactly one run has.
   *
   * @throws {UsageError} for a malformed TARGET, or one that several runs match (naming them).
   * @throws {NotFoundError} when no run matches.
   */
  async resolve(target: string): Promise<FleetRun> {
    const parts = fleetTargetParts(target);
    const runs = await this.runs();
    const matches = runs.filter((run) => matchesTarget(run, parts));
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0) {
      throw new NotFoundError(
        `No run in the fleet at ${this.shown} matches ${target}`,
        {
          code: "RUN_NOT_FOUND",
          hint: "'prompt_runner fleet ls --fleet URL' lists the fleet's runs",
        },
      );
    }
    throw new UsageError(
      `${target} matches ${matches.length} runs of the fleet: ${
        matches.map((run) => fleetAddress(run)).join(", ")
      }`,
      {
        code: "AMBIGUOUS_FLEET_TARGET",
        hint:
          "Name more of it: fleet:<root>/<run_id> or fleet:<node>/<root>/<run_id>",
      },
    );
  }

  /**
   * Where a fleet run stands: the status rollup that `prompt_runner status
   * fleet:… --json` prints (DESIGN §10), read from the fleet alone (the
   * run's snapshot, its prompts' contracts, its audit log, and its events,
   * from which its prompts' state is replayed), with its packet's prompts
   * as the fleet knows them. The runner's lease is the fleet's hearing of
   * it: `alive` while heard, `gone` (and the run `runner_gone`) once the
   * run is unreachable, `none` once it is over.
   *
   * @param run A run of the fleet, as {@linkcode FleetClient.resolve} or
   * {@linkcode FleetClient.runs} gave it.
   * @param options The current time (default: once read).
   * @returns The rollup (every field present), the prompts, and how long
   * the fleet has not heard from the run.
   * @throws {Error} when the fleet stops answering while it is read.
   */
  async status(
    run: FleetRun,
    options: { now?: number } = {},
  ): Promise<FleetStatus> {
    const log = await this.transport.log(this.ref(run));
    return await fleetStatus(this.#link, run, { ...options, log });
  }

  /** A reference to a fleet run, for the client API. */
  ref(run: FleetRunName): RunRef {
    return {
      state_root: fleetAddress(run),
      run_id: run.run_id,
      transport: this.transport,
    };
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.#link.close();
  }

  /** Closes the connection. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * Connects to a fleet as a client: lists its runs, resolves fleet
 * TARGETs, and reaches each run through the client API (`snapshot`,
 * `events`, `log`, `steer`, `setView`, `contract`, `amend`, `relax`) with
 * the reference it gives (`client.ref(run)`).
 *
 * Requires `--allow-net` to the fleet's servers, and `--allow-read` of the
 * creds file when one is named.
 *
 * @example Reaching a fleet that is not there
 * ```ts
 * import { openFleetClient } from "./mod.ts";
 * import assert from "node:assert/strict";
 *
 * await assert.rejects(
 *   openFleetClient({ url: "nats://ops:s3cret@127.0.0.1:9", timeoutMs: 500 }),
 *   (error: Error) => {
 *     assert.match(error.message, /^Cannot reach the fleet at nats:\/\/ops:\*\*\*@127\.0\.0\.1:9: /);
 *     assert.doesNotMatch(error.message, /s3cret/);
 *     return true;
 *   },
 * );
 * ```
 *
 * @throws {UsageError} for a malformed URL or creds file.
 * @throws {StateError} `FLEET_UNREACHABLE` (exit 4) when the fleet cannot
 * be reached, or refuses the credentials; the URL's secrets are masked.
 */
export async function openFleetClient(
  options: FleetClientOptions,
): Promise<FleetClient> {
  const url = typeof options.url === "string"
    ? parseFleetUrl(options.url)
    : options.url;
  const creds = options.credsFile === undefined
    ? undefined
    : await readCredsFile(options.credsFile);
  const link = await openLink({
    url,
    name: "prompt_runner client",
    timeoutMs: options.timeoutMs ?? 3_000,
    ...(creds === undefined ? {} : { creds }),
    ...(options.caFile === undefined ? {} : { caFile: options.caFile }),
  });
  return new FleetClient(link, url, options);
}
