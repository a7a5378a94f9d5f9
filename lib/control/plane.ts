/**
 * The control plane, runner side: a thin coordinator of its parts — the
 * event log, the snapshot writer, the request inbox and the steer ledger —
 * behind the runner's hooks. Nothing arriving here is fatal to a run: a
 * broken control directory becomes a warning, and a link planted in the
 * state root is moved aside, logged and never followed.
 *
 * @module
 */

import type { RunEvent, RunStatus } from "../shared/events.ts";
import type {
  BoundaryCommand,
  LinkRefusal,
  PromptStartInfo,
  RunHooks,
  RunOpened,
  RunOpenInfo,
  SteerResult,
} from "../shared/run_hooks.ts";
import type { ViewSettings } from "../shared/view.ts";
import type { BudgetSpending } from "../shared/snapshot_schema.ts";
import {
  deliveredSteers,
  interventionOf,
  recordIntervention,
} from "./_interventions.ts";
import {
  finishOrphanedSteers,
  prepareControlDir,
  recoverRequests,
} from "./_recovery.ts";
import {
  errorKind,
  type FaultHook,
  installedFaultHook,
  PlaneContext,
} from "./_plane_context.ts";
import { MAX_REQUEST_BYTES } from "./_request_files.ts";
import { EventLog } from "./event_log.ts";
import { controlPaths } from "./paths.ts";
import { RequestInbox } from "./request_inbox.ts";
import { readSnapshotFile, type Snapshot } from "./snapshot.ts";
import { initialSnapshot, SnapshotWriter } from "./snapshot_writer.ts";
import { SteerLedger } from "./steer_ledger.ts";
import { errorText } from "../shared/errors.ts";
import { NOTIFY_GRACE_MS, planeNotifier } from "./_plane_notify.ts";

export { MAX_REQUEST_BYTES };
export type { FaultHook, FaultStep } from "./_plane_context.ts";

/** Options for {@linkcode openPlane}. */
export interface PlaneOptions {
  /** Where warnings go (a broken control directory, a failed write). */
  warn?: (message: string) => void | Promise<void>;
  /**
   * Called at each step of request processing (tests stop the runner
   * there). Without one, the hook a test's entry installed
   * (`installFaultHook`), if any: no environment variable reaches it.
   */
  fault?: FaultHook;
}

/**
 * The runner side of the control plane. It implements the runner's hooks;
 * see {@linkcode openPlane}.
 */
export class ControlPlane implements RunHooks {
  readonly #ctx: PlaneContext;
  readonly #events: EventLog;
  readonly #ledger = new SteerLedger();
  readonly #inbox: RequestInbox;
  #writer!: SnapshotWriter;
  #disabled = false;
  #closed = false;
  #notifier: ReturnType<typeof planeNotifier> = null;
  /** What {@linkcode openPlane} found of an earlier process of the same run id. */
  opened: RunOpened = { last_seq: 0, view: {}, delivered_steers: {} };

  /** Creates a plane for a state root; {@linkcode openPlane} opens it. */
  constructor(stateRoot: string, options: PlaneOptions = {}) {
    this.#ctx = new PlaneContext(
      controlPaths(stateRoot),
      options.warn,
      options.fault,
    );
    this.#events = new EventLog(this.#ctx);
    this.#inbox = new RequestInbox(
      this.#ctx,
      this.#ledger,
      () => this.#writer.snapshot.max_steers,
    );
  }

  /** A link found where the run writes was moved aside: warn once, log why. */
  linkRefused(refusal: LinkRefusal): Promise<void> {
    return this.#ctx.linkRefused(refusal);
  }

  /** Opens the plane for a run: directories, archive, reconciliation, snapshot. */
  async open(info: RunOpenInfo): Promise<RunOpened> {
    const ctx = this.#ctx;
    ctx.runId = info.run_id;
    this.#writer = new SnapshotWriter(ctx, this.#events, initialSnapshot(info));
    const snap = this.#writer.snapshot;
    try {
      await prepareControlDir(ctx, this.#inbox);
      const paths = ctx.paths;
      const previous = await readSnapshotFile(paths.snapshot, paths.root)
        .catch(() => null);
      const continued = await this.#events.adopt(previous?.run_id ?? null);
      const scan = await recoverRequests(
        ctx,
        this.#inbox,
        continued,
        previous !== null && previous.status !== "running",
      );
      if (continued) {
        if (previous?.run_id === info.run_id) {
          snap.run_started_at = previous.run_started_at;
          snap.started_by = previous.started_by ?? snap.started_by;
        }
        this.opened.view = scan.view;
        for (const [prompt, ids] of await deliveredSteers(paths, ctx.runId)) {
          this.#ledger.restore(prompt, ids.size);
          this.opened.delivered_steers[prompt] = ids.size;
        }
      }
      await finishOrphanedSteers(ctx, scan.openSteers);
      this.opened.last_seq = this.#events.lastSeq;
      snap.view = { ...info.view, ...this.opened.view };
      snap.last_seq = snap.event_count = this.opened.last_seq;
      if (continued && this.#events.finished === "interrupted") {
        this.opened.interrupted = true; // it goes on after that end
      } else if (continued && this.#events.finished !== null) {
        // Killed after its end was in the stream: publish that end, go no further.
        this.opened.finished = this.#events.finished;
        snap.status = this.#events.finished;
        await this.#writer.write();
        this.#closed = true;
        return this.opened;
      }
      await this.#events.open();
      await this.#writer.write();
    } catch (error) {
      this.#disabled = true;
      this.#writer.disabled = true;
      await this.#events.close();
      await ctx.warn(
        "open",
        `disabled for this run, the run goes on without it: ${
          errorText(error)
        }`,
      );
      return this.opened;
    }
    this.#notifier = planeNotifier(info, ctx);
    this.#writer.startHeartbeat();
    return this.opened;
  }

  /** The snapshot as it stands (a copy). */
  get current(): Snapshot {
    return structuredClone(this.#writer.snapshot);
  }

  /** An attempt started: the snapshot names it at once. */
  async promptStarted(info: PromptStartInfo): Promise<void> {
    if (this.#disabled) return;
    this.#events.flush();
    const ctx = this.#ctx;
    if (ctx.promptInFlight !== info.prompt_id) {
      this.#ledger.dropPending(info.prompt_id);
    }
    ctx.promptInFlight = info.prompt_id;
    ctx.attempt = info.attempt;
    this.#writer.promptStarted();
    Object.assign(this.#writer.snapshot, {
      prompt_id: info.prompt_id,
      prompt_name: info.name,
      attempt: info.attempt,
      mode: info.mode,
      provider: info.provider,
      model: info.model,
      prompt_started_at: new Date().toISOString(),
      tool_count: 0,
      input_tokens: 0,
      output_tokens: 0,
      steer_count: this.#ledger.count(info.prompt_id),
      max_steers: info.max_steers,
    });
    await this.#writer.write();
  }

  /** Records an event: appended to `events.jsonl` and folded into the snapshot. */
  observe(event: RunEvent): Promise<void> {
    if (this.#disabled) return Promise.resolve();
    this.#events.append(event);
    this.#writer.fold(event);
    this.#notifier?.observe(event); // never waits for a delivery
    if (
      (event.type === "prompt_completed" || event.type === "prompt_failed") &&
      event.prompt_id === this.#ctx.promptInFlight
    ) this.#ctx.promptInFlight = null;
    return Promise.resolve();
  }

  /**
   * An event boundary: consumes pending requests (within a budget, so a
   * flood never starves the stream) and returns the commands to apply
   * before the next event. The snapshot is written after any request
   * (awaited), and otherwise at most every 100 ms while events flow (in
   * the background: the run does not wait for the disk).
   */
  async boundary(context: { idle: boolean }): Promise<BoundaryCommand[]> {
    if (this.#disabled || this.#closed) return [];
    const decided = this.#inbox.decided;
    if (context.idle) this.#events.flush();
    const commands = await this.#inbox.consume(context.idle);
    if (this.#inbox.decided !== decided) this.#writer.markDirty();
    if (commands.length > 0) await this.#writer.write();
    else if (this.#writer.due(false)) this.#writer.writeSoon();
    return commands;
  }

  /** A steer was delivered or refused by its lane: record it. */
  async steerSettled(result: SteerResult): Promise<void> {
    if (this.#disabled) return;
    this.#events.flush();
    const ctx = this.#ctx;
    const steer = result.command;
    const prompt = steer.prompt_id;
    this.#ledger.settle(prompt);
    this.#inbox.openSteers.delete(steer.request_id);
    let recordError: string | null = null;
    if (result.delivered) {
      try {
        await ctx.guard(() =>
          recordIntervention(ctx.paths, interventionOf(result, ctx.runId))
        );
        ctx.fault?.("steer_recorded");
      } catch (error) {
        recordError = errorText(error);
        await ctx.warn(
          `steer:${errorKind(error)}`,
          `cannot record a steer: ${recordError}`,
        );
      }
      const count = this.#ledger.record(prompt);
      if (this.#writer.snapshot.prompt_id === prompt) {
        this.#writer.snapshot.steer_count = count;
      }
    }
    try {
      await ctx.appendLog({
        run_id: ctx.runId,
        request_id: steer.request_id,
        command: "steer",
        params: result.delivered
          ? {
            text: steer.text,
            delivery: result.delivery,
            mechanism: result.mechanism,
          }
          : { text: steer.text },
        author: steer.author,
        outcome: result.delivered ? "applied" : "rejected",
        reason: result.delivered
          ? recordError === null
            ? null
            : `delivered, but the intervention record failed: ${recordError}`
          : result.reason ?? "the lane refused it",
        prompt_id: prompt,
        attempt: result.attempt,
      });
    } catch (error) {
      await ctx.warn(
        `steer-log:${errorKind(error)}`,
        `cannot log a steer: ${errorText(error)}`,
      );
    }
    await this.#writer.write();
  }

  /** How many steers were delivered to a prompt in this run id (the ledger's count). */
  steerCount(promptId: string): number {
    return this.#ledger.count(promptId);
  }

  /** The view changed: the snapshot shows it at once. */
  async viewChanged(view: ViewSettings): Promise<void> {
    if (this.#disabled) return;
    this.#events.flush();
    this.#writer.snapshot.view = { ...view };
    await this.#writer.write();
  }

  /** The spending limits in force and their spend: the next write shows them. */
  budgetChanged(budget: BudgetSpending[] | null): void {
    if (!this.#disabled) this.#writer.snapshot.budget = budget;
    this.#writer.markDirty();
  }

  /**
   * The runner stops without finishing (its environment failed): the
   * events are synced and closed, and no end is published, so the run can
   * be resumed as after a crash.
   */
  async abandon(): Promise<void> {
    if (this.#disabled || this.#closed) return;
    this.#closed = true;
    try {
      await this.#writer.stop();
    } catch {
      // The environment is failing: nothing more to save.
    }
    await this.#events.close();
    await this.#notifier?.close(0);
  }

  /**
   * The run ended: the snapshot records how (durably, first), then every
   * request still waiting is refused with a reason. A client that wrote a
   * request before it could see the final status has it decided here; one
   * that saw the final status settles its own request.
   */
  async close(status: RunStatus): Promise<void> {
    if (this.#disabled || this.#closed) return;
    this.#closed = true;
    await this.#writer.stop();
    this.#writer.snapshot.status = status;
    await this.#writer.write();
    await this.#inbox.settleAll(status);
    try {
      // Steers no lane settled get their final entry now, so a clean end
      // leaves none for the next run to find in the log.
      await finishOrphanedSteers(this.#ctx, this.#inbox.openSteers);
    } catch (error) {
      await this.#ctx.warn(
        `close:${errorKind(error)}`,
        `cannot finish unsettled steers: ${errorText(error)}`,
      );
    }
    this.#ctx.promptInFlight = null;
    await this.#events.close();
    // Deliveries still under way get a bounded grace, never more.
    await this.#notifier?.close(NOTIFY_GRACE_MS);
  }
}

/**
 * Opens the control plane of a run (the runner does this for every run with
 * a state root). It creates the control directory (mode 0700), moves the
 * previous run's `events.jsonl` to `events/<run id>.jsonl`, finishes any
 * request a killed runner left half-processed, and writes the first
 * snapshot. A control directory that cannot be used disables the plane with a
 * warning; it never fails the run.
 *
 * Requires `--allow-read` and `--allow-write` permissions.
 *
 * @param stateRoot The run's state root.
 * @param info What the runner knows of the run.
 * @param options Where warnings go.
 * @returns The plane, whose hooks the runner calls.
 *
 * @example Usage
 * ```ts
 * import { openPlane, snapshot } from "./mod.ts";
 * import assert from "node:assert/strict";
 * const root = await Deno.makeTempDir();
 * const plane = await openPlane(root, {
 *   run_id: "r1",
 *   packet: "demo",
 *   packet_dir: root,
 *   state_root: root,
 *   view: { log_mode: "compact", tool_output: "summary", thinking: "show", diff: "stat" },
 *   max_steers: 3,
 *   prompt_ids: ["01"],
 *   provider: "simulated",
 *   model: "simulated",
 * });
 * assert.equal((await snapshot({ state_root: root, run_id: "r1" })).status, "running");
 * await plane.close("completed");
 * assert.equal((await snapshot({ state_root: root, run_id: "r1" })).status, "completed");
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export async function openPlane(
  stateRoot: string,
  info: RunOpenInfo,
  options: PlaneOptions = {},
): Promise<ControlPlane> {
  const fault = options.fault ?? installedFaultHook();
  const plane = new ControlPlane(stateRoot, {
    ...options,
    ...(fault === undefined ? {} : { fault }),
  });
  await plane.open(info);
  return plane;
}
