/**
 * Running a packet: the run's lifecycle (the lock, the state root, opening
 * and closing the control plane's hooks, resuming a run id), and its prompts
 * in dependency order. Each prompt's attempts are the attempt loop's
 * (`attempt_loop.ts`).
 *
 * @module
 */

import { defaultStateRoot } from "../workspace/run_location.ts";
import { loadPacket, type Packet } from "../packet/load_packet.ts";
import type { RunStatus } from "../shared/events.ts";
import { removeStaleTemps } from "../shared/files.ts";
import { EnvironmentError, errorText, StateError } from "../shared/errors.ts";
import { openStateRoot } from "../shared/state_root.ts";
import { checkRunId, newId } from "../shared/new_id.ts";
import { DEFAULT_VIEW } from "../shared/view.ts";
import { type PlannedPrompt, planRun } from "./plan_run.ts";
import type { RunOpened } from "../shared/run_hooks.ts";
import { defaultAuthor } from "../control/request.ts";
import { withSteerLedger } from "../control/steer_ledger.ts";
import { acquireRunLock, type RunLock } from "../shared/run_lock.ts";
import { lockWorkspaceRoot } from "./_lock_workspace_root.ts";
import { readState, settleDeadAttempts } from "../status/state_file.ts";
import { environmentFailure } from "./_environment_failure.ts";
import { RunContext } from "./_run_context.ts";
import { runAttempts } from "./attempt_loop.ts";
import { stopLeftAgents } from "./_left_agents.ts";
import type { RunPacketOptions, RunResult } from "./run_options.ts";

export type {
  PromptOutcome,
  RunOutput,
  RunPacketOptions,
  RunResult,
} from "./run_options.ts";

/** One run of a packet, from the lock to `run_finished`. */
class PacketRun {
  readonly #plan: PlannedPrompt[];
  readonly #ctx: RunContext;
  /** Prompts completed earlier in this run id (a resumed run skips them). */
  #doneBefore = new Set<string>();

  constructor(
    packet: Packet,
    plan: PlannedPrompt[],
    options: RunPacketOptions,
    stateRoot: string | null,
  ) {
    this.#plan = plan;
    this.#ctx = new RunContext(
      packet,
      options,
      { ...DEFAULT_VIEW, ...packet.view, ...options.view },
      {
        runId: options.runId ?? newId(),
        stateRoot,
        hooks: withSteerLedger(options.hooks ?? {}),
      },
    );
  }

  async execute(): Promise<RunResult> {
    const ctx = this.#ctx;
    let lock: RunLock | null = null;
    if (ctx.stateRoot !== null) {
      const warn = ctx.options.warn;
      const workspaceId = ctx.options.workspaceId;
      if (workspaceId === undefined) {
        ctx.stateRoot = await openStateRoot(ctx.stateRoot, {
          create: true,
          repair: true,
          ...(warn ? { warn } : {}),
        });
        lock = await acquireRunLock(
          ctx.stateRoot,
          ctx.runId,
          ctx.options.fleet,
        );
      } else {
        // Never re-made: a workspace forgotten meanwhile stays forgotten.
        ({ root: ctx.stateRoot, lock } = await lockWorkspaceRoot(
          ctx.stateRoot,
          ctx.runId,
          workspaceId,
          {
            ...(warn ? { warn } : {}),
            ...(ctx.options.fleet === undefined
              ? {}
              : { fleet: ctx.options.fleet }),
          },
        ));
      }
      try {
        await removeStaleTemps(ctx.stateRoot, { within: ctx.stateRoot });
        ctx.state = await readState(ctx.stateRoot);
        // Before anything starts: no agent a killed runner left runs on.
        await stopLeftAgents(ctx);
        this.#settleDeadAttempts();
      } catch (error) {
        await lock.release();
        throw environmentFailure(error, ctx.stateRoot);
      }
    }
    ctx.state.run_id = ctx.runId;
    let status: RunStatus = "failed";
    let reason: string | null = null;
    let failure: unknown = null;
    let finishedBefore: StateError | null = null;
    try {
      const first = this.#plan[0];
      const info = {
        run_id: ctx.runId,
        packet: ctx.packet.name,
        packet_dir: ctx.packet.dir,
        state_root: ctx.stateRoot,
        view: ctx.output.view,
        max_steers: first?.prompt.recovery.max_steers ??
          ctx.packet.recovery.max_steers,
        prompt_ids: this.#plan.map((p) => p.prompt.id),
        provider: first?.provider.name ?? ctx.packet.provider,
        model: first?.model ?? ctx.packet.model ?? "",
        started_by: await defaultAuthor(),
        notify: ctx.packet.notify,
      };
      let opened: RunOpened | undefined;
      const openPlane = ctx.options.plane;
      if (
        ctx.options.hooks === undefined && ctx.stateRoot !== null &&
        openPlane !== undefined
      ) {
        const plane = await openPlane(ctx.stateRoot, info, {
          ...(ctx.options.warn ? { warn: ctx.options.warn } : {}),
        });
        ctx.hooks = withSteerLedger(plane);
        opened = plane.opened;
      } else {
        opened = await ctx.hooks.open?.(info);
      }
      if (opened?.finished !== undefined) {
        finishedBefore = new StateError(
          `Cannot resume run ${ctx.runId}: it finished (${opened.finished})`,
          { hint: "Start a new run without --resume" },
        );
        throw finishedBefore;
      }
      ctx.seq = opened?.last_seq ?? 0;
      if (opened && Object.keys(opened.view).length > 0) {
        // View changes an earlier process of this run applied still hold.
        ctx.output.restoreView(opened.view);
      }
      if (ctx.seq > 0) {
        // First thing in the stream: a follower that finds this line after
        // an interrupted run's run_finished knows the run goes on.
        await ctx.emit(
          "run_resumed",
          {
            after_seq: ctx.seq,
            after: opened?.interrupted === true ? "interrupted" : "runner_gone",
          },
          null,
          null,
        );
      }
      await ctx.saveState();
      [status, reason] = await this.#runPrompts();
    } catch (error) {
      failure = error;
      status = ctx.aborted ? "interrupted" : "failed";
      reason = `internal error: ${errorText(error)}`;
    }
    if (failure instanceof EnvironmentError) {
      await this.#abandon(failure);
      await lock?.release();
      throw failure;
    }
    if (finishedBefore !== null) {
      // Nothing is added to a stream that already ends with run_finished.
      await ctx.hooks.abandon?.().catch(() => {});
      await lock?.release();
      throw finishedBefore;
    }
    try {
      await ctx.emit(
        "run_finished",
        {
          status,
          reason,
          prompts: Object.fromEntries(
            Object.entries(ctx.outcomes).map(([id, o]) => [id, o.status]),
          ),
        },
        null,
        null,
      );
      await ctx.output.finish();
      // Open only when the run stopped mid-attempt (an internal error).
      await ctx.output.closeTranscript();
    } catch (error) {
      failure ??= error;
    }
    try {
      await ctx.hooks.close?.(status);
      await ctx.saveState();
    } catch (error) {
      failure ??= error;
    } finally {
      await lock?.release();
    }
    if (failure instanceof EnvironmentError) throw failure;
    if (failure !== null && !ctx.aborted) throw failure;
    return {
      run_id: ctx.runId,
      status,
      reason,
      state_root: ctx.stateRoot,
      prompts: ctx.outcomes,
    };
  }

  /**
   * Records attempts a dead runner left `running` (it was killed, or its
   * machine went down) as interrupted: the run lock is ours, so no live
   * runner is behind them. Prompts this run id completed are remembered:
   * a resumed run continues after them.
   */
  #settleDeadAttempts(): void {
    const ctx = this.#ctx;
    settleDeadAttempts(ctx.state, new Date().toISOString());
    for (const [id, entry] of Object.entries(ctx.state.prompts)) {
      if (entry.status === "completed" && entry.run_id === ctx.runId) {
        this.#doneBefore.add(id);
      }
    }
  }

  /**
   * The environment failed (a full disk): the attempt under way is recorded
   * as interrupted where the state can still be written, the control plane
   * closes its files without publishing an end, and the run can be resumed
   * once the environment is fixed.
   */
  async #abandon(failure: EnvironmentError): Promise<void> {
    const ctx = this.#ctx;
    const now = new Date().toISOString();
    if (ctx.attempt !== null) {
      const { entry, record } = ctx.attempt;
      if (record.status === "running") {
        record.status = "interrupted";
        record.finished_at = now;
        record.reason = failure.message;
      }
      entry.status = "interrupted";
      entry.reason = failure.message;
    }
    ctx.session?.interrupt();
    await ctx.output.closeTranscript().catch(() => {});
    await ctx.saveState().catch(() => {});
    await ctx.hooks.abandon?.().catch(() => {});
  }

  async #runPrompts(): Promise<[RunStatus, string | null]> {
    const ctx = this.#ctx;
    const completed = new Set<string>();
    for (const planned of this.#plan) {
      const { prompt } = planned;
      if (ctx.aborted) {
        return ["interrupted", "interrupted before prompt " + prompt.id];
      }
      if (this.#doneBefore.has(prompt.id)) {
        // Completed by an earlier process of this run: the run continues after it.
        completed.add(prompt.id);
        ctx.outcomes[prompt.id] = {
          status: "completed",
          reason: "completed before the run was resumed",
          attempts: [],
        };
        continue;
      }
      const blockers = prompt.depends_on.filter((id) =>
        !completed.has(id) && ctx.state.prompts[id]?.status !== "completed"
      );
      if (blockers.length > 0) {
        const reason = `waiting for ${
          blockers.map((id) =>
            `${id} (${ctx.state.prompts[id]?.status ?? "not run"})`
          )
            .join(", ")
        }`;
        const entry = ctx.promptState(prompt.id, prompt.name);
        entry.status = "blocked";
        entry.reason = reason;
        entry.blocked_by = blockers;
        ctx.outcomes[prompt.id] = { status: "blocked", reason, attempts: [] };
        await ctx.saveState();
        await ctx.emit(
          "prompt_failed",
          {
            prompt_id: prompt.id,
            status: "blocked",
            reason,
            blocked_by: blockers,
          },
          prompt.id,
          null,
        );
        return ["blocked", `prompt ${prompt.id} is blocked: ${reason}`];
      }
      const outcome = await runAttempts(ctx, planned);
      if (outcome.status === "completed") {
        completed.add(prompt.id);
        continue;
      }
      if (outcome.status === "interrupted") {
        return ["interrupted", `interrupted during prompt ${prompt.id}`];
      }
      return [
        "failed",
        `prompt ${prompt.id} ${outcome.status}: ${outcome.reason}`,
      ];
    }
    return ["completed", null];
  }
}

/**
 * Runs a packet: each selected prompt in dependency order, with attempts,
 * failure-resume, verification and recovery (retry, repair), fail-fast.
 * Events go to `options.hooks`, or to the control plane `options.plane`
 * opens (the runner builds none), then to `onEvent` and the output; state
 * goes to the state root unless the run is in-memory. The public
 * `runPacket` (`lib/runner/mod.ts`) is this with the file plane.
 *
 * @param packet A packet directory, or a loaded packet.
 * @param options Selection, provider, view, state root, output, hooks and
 * plane.
 * @returns How the run ended and each prompt's outcome.
 */
export async function runPacket(
  packet: string | Packet,
  options: RunPacketOptions = {},
): Promise<RunResult> {
  if (options.runId !== undefined) checkRunId(options.runId);
  const loaded = typeof packet === "string" ? await loadPacket(packet) : packet;
  const plan = await planRun(loaded, {
    ...(options.ids ? { ids: options.ids } : {}),
    ...(options.provider ? { provider: options.provider } : {}),
    ...(options.model ? { model: options.model } : {}),
  });
  const stateRoot = options.stateRoot === undefined
    ? defaultStateRoot(loaded.dir)
    : options.stateRoot;
  return await new PacketRun(loaded, plan, options, stateRoot).execute();
}
