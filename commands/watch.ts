/**
 * `prompt_runner watch`: a sample of the newest run a second, until the
 * run completes (exit 0) or a requirement breaks: it needs a person
 * (`attention`, exit 6), its runner is gone or it is not running when it
 * must be (`not_running`, exit 4), or it has gone quiet for too long
 * (`progress_stale`, exit 124).
 *
 * @module
 */

import { loadPacket } from "../lib/packet/mod.ts";
import { resolveRunLocation } from "../lib/workspace/mod.ts";
import {
  attentionText,
  gatherStatus,
  spendingText,
  type StatusRollup,
  statusRollup,
} from "../lib/status/mod.ts";
import { duration } from "../lib/render/duration.ts";
import { paint, terminalSafe } from "../lib/render/mod.ts";
import { sleep } from "../lib/shared/sleep.ts";
import { StateError, UsageError } from "../lib/shared/mod.ts";
import { onStopSignals, stopExitCode } from "../lib/shared/stop_signals.ts";
import { parseCommandArgs, secondsFlag, stringFlag } from "./_args.ts";
import { WORKSPACE_FLAGS, workspaceFlags } from "./control/_target.ts";
import type { Command, CommandContext } from "./_context.ts";
import { WATCH_INFO } from "./_help.ts";
import { FLEET_FLAGS, openTargetFleet } from "./_fleet_flags.ts";
import { isFleetTarget } from "../lib/fleet/fleet_names.ts";
import type { RunRef } from "../lib/control/paths.ts";
import { AttentionTap } from "./_attention_tap.ts";

const FLAGS = {
  "state-root": { type: "string" },
  ...WORKSPACE_FLAGS,
  ...FLEET_FLAGS,
  "progress-timeout": { type: "string" },
  "require-running": { type: "boolean" },
  json: { type: "boolean" },
} as const;

/** How often a sample is taken. */
const SAMPLE_MS = 1_000;

/** How long a watch whose run ended waits for the tap to reach the end. */
const SETTLE_MS = 2_000;

/** Why a watch ends early, and its exit code (README "Exit codes"). */
export const WATCH_EXITS = {
  not_running: 4,
  attention: 6,
  progress_stale: 124,
} as const;

/** A reason a watch ends early. */
export type WatchReason = keyof typeof WATCH_EXITS;

/** One sample, as `--json` prints it. */
export interface WatchSample {
  v: 1;
  at: string;
  target: string;
  run_id: string | null;
  status: StatusRollup["run"]["status"];
  prompt_id: string | null;
  attempt: number | null;
  mode: string | null;
  last_event_age_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  attention: StatusRollup["attention"];
  budget: StatusRollup["budget"];
  /** Set on the last sample of a watch that ended early. */
  violation?: { reason: WatchReason; detail: string };
}

function sampleOf(r: StatusRollup, at: number): WatchSample {
  return {
    v: 1,
    at: new Date(at).toISOString(),
    target: r.target,
    run_id: r.run.id,
    status: r.run.status,
    prompt_id: r.progress.current.id,
    attempt: r.attempt.number,
    mode: r.attempt.mode,
    last_event_age_ms: r.provider.last_event_age_ms,
    input_tokens: r.provider.input_tokens,
    output_tokens: r.provider.output_tokens,
    cost_usd: r.provider.cost_usd,
    attention: r.attention,
    budget: r.budget,
  };
}

/** The requirement a sample breaks, if any, in the order the help lists. */
function violationOf(
  r: StatusRollup,
  limits: { progressMs: number | null; requireRunning: boolean },
): WatchSample["violation"] | null {
  if (r.attention !== null) {
    return {
      reason: "attention",
      detail: `${attentionText(r.attention)}: ${r.attention.detail}`,
    };
  }
  if (r.run.status === "runner_gone") {
    return {
      reason: "not_running",
      detail: `the runner (pid ${r.lease.pid ?? "?"}) is gone`,
    };
  }
  if (
    limits.requireRunning && r.run.status !== "running" &&
    r.run.status !== "completed"
  ) {
    return {
      reason: "not_running",
      detail: `the run is ${r.run.status.replaceAll("_", " ")}`,
    };
  }
  const age = r.provider.last_event_age_ms;
  if (
    limits.progressMs !== null && r.run.status === "running" &&
    (age === null || age > limits.progressMs)
  ) {
    return {
      reason: "progress_stale",
      detail: `no event for ${age === null ? "ever" : duration(age)} (limit ${
        duration(limits.progressMs)
      })`,
    };
  }
  return null;
}

function sampleLine(s: WatchSample): string {
  const parts = [
    `${s.at.slice(11, 19)}Z`,
    s.status.replaceAll("_", " "),
  ];
  if (s.prompt_id !== null) {
    parts.push(
      `${s.prompt_id}${s.attempt === null ? "" : ` attempt ${s.attempt}`}${
        s.mode ? ` (${s.mode})` : ""
      }`,
    );
  }
  if (s.last_event_age_ms !== null) {
    parts.push(`last event ${duration(s.last_event_age_ms)} ago`);
  }
  if (s.input_tokens !== null) {
    parts.push(`${s.input_tokens}/${s.output_tokens} tokens`);
  }
  if (s.cost_usd !== null) parts.push(`$${s.cost_usd.toFixed(4)}`);
  for (const b of s.budget ?? []) parts.push(`budget ${spendingText(b)}`);
  parts.push(
    s.attention === null
      ? "attention: none"
      : paint(`attention: ${attentionText(s.attention)}`, "red"),
  );
  return parts.join(" · ");
}

async function watch(context: CommandContext, argv: string[]): Promise<number> {
  const args = parseCommandArgs("watch", argv, FLAGS);
  if (args.values.help) {
    await context.stdout.write(WATCH_INFO.help);
    return 0;
  }
  if (args.positionals.length > 1) {
    throw new UsageError(
      `Too many arguments: expected at most one TARGET, found ${args.positionals.length}`,
      { hint: "Run 'prompt_runner watch --help'" },
    );
  }
  const given = stringFlag(args, "progress-timeout");
  const limits = {
    progressMs: given === undefined
      ? null
      : secondsFlag("--progress-timeout", given) * 1000,
    requireRunning: args.values["require-running"] === true,
  };
  const target = args.positionals[0];
  await using sampler = isFleetTarget(target)
    ? await fleetSampler(context, target, args.values)
    : await fileSampler(context, args);
  const json = args.values.json === true;
  const stop = new AbortController();
  let signalled: Deno.Signal | null = null;
  const removeListeners = onStopSignals(["SIGINT", "SIGTERM"], (signal) => {
    signalled = signal;
    stop.abort();
  });
  await using tap = new AttentionTap();
  try {
    for (;;) {
      const now = Date.now();
      const taken = await sampler.sample(now);
      tap.track(taken.ref, taken.lastSeq);
      let rollup = taken.rollup;
      if (rollup.attention === null && rollup.run.status === "completed") {
        await tap.settle(SETTLE_MS);
      }
      // Raised and cleared since the last sample: the stream has it.
      if (rollup.attention === null && tap.heard !== null) {
        rollup = { ...rollup, attention: tap.heard };
      }
      const sample = sampleOf(rollup, now);
      const violation = violationOf(rollup, limits);
      if (violation) sample.violation = violation;
      if (json) await context.stdout.json(sample);
      else {
        await context.stdout.write(
          terminalSafe(sampleLine(sample) + "\n", { style: context.color }),
        );
      }
      if (violation) {
        await context.stderr.line(
          `error: watch: ${violation.reason}: ${
            terminalSafe(violation.detail)
          }`,
        );
        return WATCH_EXITS[violation.reason];
      }
      if (rollup.run.status === "completed") return 0;
      await sleep(SAMPLE_MS, stop.signal);
      if (signalled !== null) return stopExitCode(signalled);
    }
  } finally {
    removeListeners();
  }
}

/** A sample as read: the rollup, and the run it read for the tap. */
interface Taken {
  rollup: StatusRollup;
  /** The run the sample read (`null`: none yet). */
  ref: RunRef | null;
  /** The last seq its snapshot had folded in. */
  lastSeq: number | null;
}

/** Where the samples come from: the state root's files, or a fleet. */
interface Sampler extends AsyncDisposable {
  sample(now: number): Promise<Taken>;
}

async function fileSampler(
  context: CommandContext,
  args: ReturnType<typeof parseCommandArgs>,
): Promise<Sampler> {
  const location = await resolveRunLocation(args.positionals[0], {
    needs: "state_root",
    cwd: context.cwd,
    stateRoot: stringFlag(args, "state-root"),
    ...workspaceFlags(args),
  });
  const packet = location.packet_dir === null
    ? null
    : await loadPacket(location.packet_dir).catch(() => null);
  return {
    async sample(now: number): Promise<Taken> {
      const { inputs } = await gatherStatus({
        target: location.workspace_id ?? location.packet_dir ??
          location.state_root,
        workspace_id: location.workspace_id,
        state_root: location.state_root,
        packet_prompts:
          packet?.prompts.map((p) => ({ id: p.id, name: p.name })) ?? null,
      }).catch((error) => {
        throw new StateError(`Cannot read the run to watch: ${error}`);
      });
      const snap = inputs.snapshot;
      return {
        rollup: statusRollup(inputs, now),
        ref: snap === null
          ? null
          : { state_root: location.state_root, run_id: snap.run_id },
        lastSeq: snap?.last_seq ?? null,
      };
    },
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
}

/** Samples a fleet run (DESIGN §12) as `status fleet:…` reads it. */
async function fleetSampler(
  context: CommandContext,
  target: string,
  values: Record<string, unknown>,
): Promise<Sampler> {
  const client = await openTargetFleet(values, context.cwd, target);
  return {
    async sample(): Promise<Taken> {
      const run = await client.resolve(target);
      return {
        rollup: (await client.status(run)).rollup,
        ref: client.ref(run),
        lastSeq: run.snapshot.last_seq,
      };
    },
    [Symbol.asyncDispose]: () => client[Symbol.asyncDispose](),
  };
}

/** The `watch` command. */
export const watchCommand: Command = {
  ...WATCH_INFO,
  run: watch,
};
