/**
 * The soak's shared state: its counts, the acknowledged requests and
 * amendments, the followers' trackers, and the CLI processes it started
 * (clients niced, the runner not).
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { defaultStateRoot } from "../../lib/workspace/mod.ts";
import {
  type CliResult,
  readAll,
  spawnCli,
  Violations,
} from "../_harness/mod.ts";
import type { FollowTracker } from "./audits/reads.ts";
import type { AckedAmendment } from "./audits/runs.ts";

/**
 * Clients run at this niceness: on a two-core machine 14 client loops
 * would otherwise starve the runner, and kills would come faster than it
 * can make progress.
 */
const CLIENT_NICE = 10;

interface Counts {
  requests: number;
  acked: number;
  refused: number;
  settledByClient: number;
  seqs: number;
  statusReads: number;
  amendments: number;
  kills: number;
  runsStarted: number;
  runsCompleted: number;
  resumes: number;
  resumeFoundFinished: number;
  followerRestarts: number;
  longPauses: number;
}

export interface Runner {
  child: Deno.ChildProcess;
  stderr: Promise<string>;
  startedAt: number;
  resume: boolean;
}

export class Soak {
  readonly dir: string;
  readonly packet: string;
  readonly stateRoot: string;
  readonly seed: number;
  readonly violations = new Violations();
  readonly counts: Counts = {
    requests: 0,
    acked: 0,
    refused: 0,
    settledByClient: 0,
    seqs: 0,
    statusReads: 0,
    amendments: 0,
    kills: 0,
    runsStarted: 0,
    runsCompleted: 0,
    resumes: 0,
    resumeFoundFinished: 0,
    followerRestarts: 0,
    longPauses: 0,
  };
  /** Acknowledged requests: id → command. */
  readonly acked = new Map<string, string>();
  readonly amendments: AckedAmendment[] = [];
  readonly trackers: FollowTracker[] = [];
  readonly live = new Set<Deno.ChildProcess>();
  readonly began = Date.now();
  stopWriters = false;
  stopPollers = false;
  stopFollowers = false;
  poolNext = 0;

  constructor(dir: string, packet: string, seed: number) {
    this.dir = dir;
    this.packet = packet;
    this.stateRoot = defaultStateRoot(packet);
    this.seed = seed;
  }

  /** A progress line on stderr, stamped with the seconds since the start. */
  progress(text: string): void {
    const t = ((Date.now() - this.began) / 1000).toFixed(1);
    console.error(`soak: t+${t}s ${text}`);
  }

  /** Starts a CLI process; clients run niced, the runner does not. */
  spawn(
    args: string[],
    stdout: "piped" | "null" = "piped",
    client = true,
  ): Deno.ChildProcess {
    const child = spawnCli(args, {
      stdout,
      ...(client ? { nice: CLIENT_NICE } : {}),
    });
    this.live.add(child);
    child.status.finally(() => this.live.delete(child));
    return child;
  }

  async cli(args: string[]): Promise<CliResult> {
    const child = this.spawn(args);
    const [stdout, stderr, status] = await Promise.all([
      readAll(child.stdout),
      readAll(child.stderr),
      child.status,
    ]);
    return { code: status.code, signal: status.signal, stdout, stderr };
  }

  startRunner(resume: boolean): Runner {
    const child = this.spawn(
      ["run", this.packet, "--json", ...(resume ? ["--resume"] : [])],
      "null",
      false,
    );
    if (resume) this.counts.resumes++;
    else {
      this.counts.runsStarted++;
      this.progress(`run ${this.counts.runsStarted} started`);
    }
    return {
      child,
      stderr: readAll(child.stderr),
      startedAt: Date.now(),
      resume,
    };
  }

  async killAll(): Promise<void> {
    for (const child of this.live) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await Promise.allSettled([...this.live].map((child) => child.status));
  }
}
