/**
 * A bridge's state loops: the run's snapshot into `PR_RUNS` (at each change
 * and at least every second while the runner lives; the final one only
 * once the events are all published), and its prompts' contracts into
 * `PR_CONTRACTS` (when the bridge starts, and after every amendment).
 *
 * @module
 */

import { fileContracts } from "../contract/file_contracts.ts";
import { controlPaths } from "../control/paths.ts";
import { DirWaker } from "../control/line_tail.ts";
import { loadPacket } from "../packet/load_packet.ts";
import { errorText } from "../shared/errors.ts";
import { readTextIfExists } from "../shared/read_file.ts";
import { basename } from "../shared/posix_path.ts";
import { type BridgeRun, isAbort } from "./_bridge_run.ts";
import { pause } from "./_session.ts";
import { contractKey, CONTRACTS_BUCKET, RUNS_BUCKET } from "./fleet_names.ts";

/** A live run's snapshot is put at least this often. */
const HEARTBEAT_MS = 1_000;
/** …and at most this often. */
const COALESCE_MS = 100;

const encoder = new TextEncoder();

/** The snapshot's run and status, or `null` when it is not one. */
function glance(text: string): { run_id: string; status: string } | null {
  try {
    const value = JSON.parse(text);
    return typeof value?.run_id === "string" && typeof value.status === "string"
      ? value
      : null;
  } catch {
    return null;
  }
}

/**
 * Puts the run's snapshot into `PR_RUNS` until its final one is put (or the
 * bridge stops, or another run takes the state root). The final one waits
 * for the events loop (`eventsDone`), and goes as soon as it is done: the
 * end of a run waits for it.
 */
export async function bridgeSnapshots(
  run: BridgeRun,
  eventsDone: Promise<unknown>,
): Promise<void> {
  const paths = controlPaths(run.ref.state_root);
  const waker = new DirWaker(paths.dir, [basename(paths.snapshot)]);
  eventsDone.then(() => waker.wake());
  let lastText = "";
  let lastPut = 0;
  try {
    while (!run.stop.aborted) {
      const text = await readTextIfExists(paths.snapshot, {
        within: paths.root,
      }).catch(() => null);
      const seen = text === null ? null : glance(text);
      if (seen !== null && seen.run_id !== run.ref.run_id) return;
      const final = seen !== null && seen.status !== "running";
      const due = seen !== null &&
        (text !== lastText || Date.now() - lastPut >= HEARTBEAT_MS) &&
        (final || Date.now() - lastPut >= COALESCE_MS) &&
        (!final || run.progress.eventsSettled) &&
        run.session.connected;
      if (due) {
        // A sidecar stops the heartbeat of a run whose runner died: the
        // fleet then reads it as unreachable, as it is.
        if (!final && !await run.runnerAlive()) return;
        try {
          const link = await run.session.ready(run.stop);
          await link.kvPut(
            RUNS_BUCKET,
            run.names.key,
            encoder.encode(text!),
          );
          lastText = text!;
          lastPut = Date.now();
          run.progress.snapshots++;
          run.progress.lastProgress = lastPut;
          if (final) {
            run.progress.finalSnapshot = true;
            return;
          }
        } catch (error) {
          if (isAbort(error)) return;
          await pause(250, run.stop);
        }
        continue;
      }
      await waker.wait(run.stop, final ? 100 : 250);
    }
  } finally {
    await waker.close();
  }
}

/** Puts a run's prompts' contracts into `PR_CONTRACTS`, each when it changes. */
export class ContractPuts {
  readonly #run: () => BridgeRun;
  readonly #queue = new Set<string>();
  #wake: (() => void) | null = null;

  constructor(run: () => BridgeRun) {
    this.#run = run;
  }

  /** Queues a prompt's contract to be put. */
  changed(promptId: string): void {
    this.#queue.add(promptId);
    this.#wake?.();
  }

  /** Queues every prompt of the packet. */
  async all(): Promise<void> {
    const run = this.#run();
    if (run.packetDir === null) return;
    try {
      const packet = await loadPacket(run.packetDir);
      for (const prompt of packet.prompts) this.changed(prompt.id);
    } catch {
      // A packet that cannot be loaded now has no contracts to show.
    }
  }

  /** Puts queued contracts until the bridge finishes (then the rest). */
  async loop(): Promise<void> {
    const run = this.#run();
    while (!run.stop.aborted) {
      if (this.#queue.size === 0) {
        if (run.finishing.aborted) return;
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          run.finishing.addEventListener("abort", () => resolve(), {
            once: true,
          });
        });
        this.#wake = null;
        continue;
      }
      const promptId = this.#queue.values().next().value!;
      try {
        const link = await run.session.ready(run.stop);
        const view = await fileContracts.contract({
          packet_dir: run.packetDir!,
          state_root: run.ref.state_root,
        }, promptId);
        await link.kvPut(
          CONTRACTS_BUCKET,
          contractKey(run.names.key, promptId),
          encoder.encode(JSON.stringify(view)),
        );
        this.#queue.delete(promptId);
        run.progress.lastProgress = Date.now();
      } catch (error) {
        if (isAbort(error)) return;
        if (run.packetDir === null || !run.session.connected) {
          await pause(250, run.stop);
          continue;
        }
        // The prompt's contract cannot be read (a corrupt amendments file):
        // nothing to show for it, said once.
        this.#queue.delete(promptId);
        run.session.say(
          `Cannot publish the contract of prompt ${promptId} to the fleet: ${
            errorText(error)
          }`,
        );
      }
    }
  }
}
