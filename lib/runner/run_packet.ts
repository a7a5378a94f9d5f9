/**
 * Running a packet: for each selected prompt, attempts with failure-resume,
 * verification, and the recovery policy; state files, the run lock, events,
 * and the hooks the control plane plugs into.
 *
 * @module
 */

import { defaultStateRoot } from "../workspace/run_location.ts";
import { join, relative } from "node:path";
import type { Contract } from "../packet/contract.ts";
import {
  loadPacket,
  type Packet,
  type PromptSpec,
} from "../packet/load_packet.ts";
import { classifyFailure, type FailureEnvelope } from "../providers/failure.ts";
import type {
  AttemptMode,
  Session,
  SessionRequest,
} from "../providers/provider.ts";
import { createRenderer } from "../render/create_renderer.ts";
import {
  pathOnlyChanges,
  readCurrentDiffs,
  type RenderContext,
} from "../render/current_diff.ts";
import {
  logFileSink,
  ndjsonSink,
  type RenderSink,
  terminalSink,
} from "../render/sinks.ts";
import type { Renderer } from "../render/renderer.ts";
import type { ProviderEvent, RunEvent, RunStatus } from "../shared/events.ts";
import {
  createNewFile,
  ensurePrivateDir,
  isEnvironmentError,
  moveLinkAside,
  openAppend,
  removeStaleTemps,
  writeAll,
} from "../shared/files.ts";
import { EnvironmentError, LinkRefusedError } from "../shared/errors.ts";
import { openStateRoot } from "../shared/state_root.ts";
import { checkRunId, newId } from "../shared/new_id.ts";
import { sleep } from "../shared/sleep.ts";
import { DEFAULT_VIEW, type ViewSettings } from "../shared/view.ts";
import type { VerifyReport } from "../verify/report.ts";
import { verifyContract } from "../verify/verify_contract.ts";
import { type PlannedPrompt, planRun } from "./plan_run.ts";
import { decideOutcome, type Decision } from "./recovery_policy.ts";
import { currentContract, type EnforcedContract } from "./enforced_contract.ts";
import { buildRepairPrompt } from "./repair_prompt.ts";
import type {
  BoundaryCommand,
  RunHooks,
  RunOpened,
  SteerCommand,
} from "../shared/run_hooks.ts";
import { openPlane } from "../control/plane.ts";
import { withSteerLedger } from "../control/steer_ledger.ts";
import { acquireRunLock, type RunLock } from "../shared/run_lock.ts";
import {
  type AttemptRecord,
  emptyState,
  type PromptState,
  readState,
  type RunState,
  STATE_FILE,
  writeState,
} from "./state_file.ts";
import { probesDiffer, probeWorkspace } from "./_workspace_probe.ts";

/** Where a run writes what it renders. */
export interface RunOutput {
  /** Writes text; the caller decides where it goes (stdout, a buffer). */
  write(text: string): Promise<void>;
  /** Write NDJSON canonical events instead of rendered text. */
  json?: boolean;
  /** Keep ANSI styling (otherwise it is stripped). */
  color?: boolean;
}

/** Options for {@linkcode runPacket}. */
export interface RunPacketOptions {
  /** Prompt ids to run, in order; all prompts when absent or empty. */
  ids?: string[];
  /** A provider for every prompt, replacing the packet's. */
  provider?: string;
  /** A model for every prompt, replacing the packet's. */
  model?: string;
  /** View settings replacing the packet's defaults. */
  view?: Partial<ViewSettings>;
  /**
   * The state root. Absent: the packet's `.prompt_runner/`. `null`: an
   * in-memory run that writes nothing to disk.
   */
  stateRoot?: string | null;
  /** The run id; a new time-sortable id when absent. */
  runId?: string;
  /** Aborting it ends the run as `interrupted`. */
  signal?: AbortSignal;
  /** Where rendered text (or NDJSON) goes; nowhere when absent. */
  output?: RunOutput;
  /** The control plane's hooks. */
  hooks?: RunHooks;
  /** Where warnings go (a control directory that cannot be written). */
  warn?: (message: string) => void | Promise<void>;
  /** Called for every event, after the hooks observed it. */
  onEvent?: (event: RunEvent) => void | Promise<void>;
  /**
   * Supplies the contract to enforce at each verification, given the
   * prompt file's contract as read for it. When absent: that contract plus
   * the state root's amendments.
   */
  contract?: (
    prompt: string,
    packetContract: Contract,
  ) => Promise<EnforcedContract>;
  /** A random source for retry jitter (tests pin it). */
  random?: () => number;
}

/** One prompt's outcome in a run. */
export interface PromptOutcome {
  /** The prompt's final status in this run. */
  status: PromptState["status"];
  /** Why, when it did not simply complete. */
  reason: string | null;
  /** The modes of the attempts made in this run. */
  attempts: AttemptMode[];
}

/** What {@linkcode runPacket} returns. */
export interface RunResult {
  /** The run's id. */
  run_id: string;
  /** How the run ended. */
  status: RunStatus;
  /** Why, when it did not complete. */
  reason: string | null;
  /** The state root, or `null` for an in-memory run. */
  state_root: string | null;
  /** Each attempted prompt's outcome, by id. */
  prompts: Record<string, PromptOutcome>;
}

/** The longest a runner goes without consuming control requests. */
const IDLE_TICK_MS = 1000;

/** Resolves with the promise's value, or `null` when `ms` pass first. */
async function settleWithin<T>(
  promise: Promise<T>,
  ms: number,
): Promise<T | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const STEER_SUFFIX =
  "\n\n(This is a steer from the operator, not a new task. " +
  "Take it into account and carry on with the work you were doing: the task " +
  "is unchanged. Do not start over and do not stop to acknowledge this message.)";

interface SessionOutcome {
  failure: FailureEnvelope | null;
  interrupted: boolean;
  resumes: number;
}

class PacketRun {
  readonly #packet: Packet;
  readonly #plan: PlannedPrompt[];
  readonly #options: RunPacketOptions;
  #hooks: RunHooks;
  #stateRoot: string | null;
  readonly #runId: string;
  readonly #abort = new AbortController();
  #seq = 0;
  #view: ViewSettings;
  #renderer: Renderer;
  #state: RunState = emptyState();
  #transcript: Deno.FsFile | null = null;
  #transcriptSink: RenderSink | null = null;
  #session: Session | null = null;
  #current: { prompt: string; attempt: number } | null = null;
  #steers: SteerCommand[] = [];
  #delivering: SteerCommand | null = null;
  #outcomes: Record<string, PromptOutcome> = {};
  #providerName: string | null = null;
  #outputSink: RenderSink | null;
  #tools = new Map<string, { name: string; input: Record<string, unknown> }>();
  #cwd: string | null = null;
  /** The attempt under way, for the record of a run the environment stopped. */
  #attempt: { entry: PromptState; record: AttemptRecord } | null = null;
  /** Prompts completed earlier in this run id (a resumed run skips them). */
  #doneBefore = new Set<string>();

  constructor(
    packet: Packet,
    plan: PlannedPrompt[],
    options: RunPacketOptions,
    stateRoot: string | null,
  ) {
    this.#packet = packet;
    this.#plan = plan;
    this.#options = options;
    this.#hooks = withSteerLedger(options.hooks ?? {});
    this.#stateRoot = stateRoot;
    this.#runId = options.runId ?? newId();
    this.#view = { ...DEFAULT_VIEW, ...packet.view, ...options.view };
    this.#renderer = createRenderer(this.#view);
    const output = options.output;
    this.#outputSink = output === undefined
      ? null
      : output.json
      ? ndjsonSink((text) => output.write(text))
      : terminalSink((text) => output.write(text), {
        color: output.color === true,
      });
    if (options.signal) {
      const signal = options.signal;
      if (signal.aborted) this.#abort.abort();
      else {signal.addEventListener("abort", () => this.#abort.abort(), {
          once: true,
        });}
    }
  }

  get #aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  async execute(): Promise<RunResult> {
    let lock: RunLock | null = null;
    if (this.#stateRoot !== null) {
      const warn = this.#options.warn;
      this.#stateRoot = await openStateRoot(this.#stateRoot, {
        create: true,
        repair: true,
        ...(warn ? { warn } : {}),
      });
      lock = await acquireRunLock(this.#stateRoot, this.#runId);
      try {
        await removeStaleTemps(this.#stateRoot, { within: this.#stateRoot });
        this.#state = await readState(this.#stateRoot);
        this.#settleDeadAttempts();
      } catch (error) {
        await lock.release();
        throw environmentFailure(error, this.#stateRoot);
      }
    }
    this.#state.run_id = this.#runId;
    let status: RunStatus = "failed";
    let reason: string | null = null;
    let failure: unknown = null;
    try {
      const first = this.#plan[0];
      const info = {
        run_id: this.#runId,
        packet: this.#packet.name,
        packet_dir: this.#packet.dir,
        state_root: this.#stateRoot,
        view: { ...this.#view },
        max_steers: first?.prompt.recovery.max_steers ??
          this.#packet.recovery.max_steers,
        prompt_ids: this.#plan.map((p) => p.prompt.id),
        provider: first?.provider.name ?? this.#packet.provider,
        model: first?.model ?? this.#packet.model ?? "",
      };
      let opened: RunOpened | undefined;
      if (this.#options.hooks === undefined && this.#stateRoot !== null) {
        const plane = await openPlane(this.#stateRoot, info, {
          ...(this.#options.warn ? { warn: this.#options.warn } : {}),
        });
        this.#hooks = plane;
        opened = plane.opened;
      } else {
        opened = await this.#hooks.open?.(info);
      }
      this.#seq = opened?.last_seq ?? 0;
      if (opened && Object.keys(opened.view).length > 0) {
        // View changes an earlier process of this run applied still hold.
        const next = { ...this.#view, ...opened.view };
        if (next.log_mode !== this.#view.log_mode) {
          this.#renderer = createRenderer(next);
        } else this.#renderer.setView(next);
        this.#view = next;
      }
      await this.#saveState();
      [status, reason] = await this.#runPrompts();
    } catch (error) {
      failure = error;
      status = this.#aborted ? "interrupted" : "failed";
      reason = `internal error: ${(error as Error)?.message ?? String(error)}`;
    }
    if (failure instanceof EnvironmentError) {
      await this.#abandon(failure);
      await lock?.release();
      throw failure;
    }
    try {
      await this.#emit(
        "run_finished",
        {
          status,
          reason,
          prompts: Object.fromEntries(
            Object.entries(this.#outcomes).map(([id, o]) => [id, o.status]),
          ),
        },
        null,
        null,
      );
      await this.#writeText(this.#renderer.finish());
    } catch (error) {
      failure ??= error;
    }
    try {
      await this.#hooks.close?.(status);
      await this.#saveState();
    } catch (error) {
      failure ??= error;
    } finally {
      await lock?.release();
    }
    if (failure instanceof EnvironmentError) throw failure;
    if (failure !== null && !this.#aborted) throw failure;
    return {
      run_id: this.#runId,
      status,
      reason,
      state_root: this.#stateRoot,
      prompts: this.#outcomes,
    };
  }

  /**
   * Records attempts a dead runner left `running` (it was killed, or its
   * machine went down) as interrupted: the run lock is ours, so no live
   * runner is behind them. Prompts this run id completed are remembered:
   * a resumed run continues after them.
   */
  #settleDeadAttempts(): void {
    const now = new Date().toISOString();
    for (const entry of Object.values(this.#state.prompts)) {
      for (const record of entry.attempts) {
        if (record.status !== "running") continue;
        record.status = "interrupted";
        record.finished_at ??= now;
        record.reason =
          "the runner stopped during this attempt (killed, or its machine went down)";
      }
      if (
        entry.status === "running" || entry.status === "retry_scheduled" ||
        entry.status === "repairing"
      ) {
        entry.status = "interrupted";
        entry.reason = "the runner stopped before the prompt finished";
      }
    }
    for (const [id, entry] of Object.entries(this.#state.prompts)) {
      if (entry.status === "completed" && entry.run_id === this.#runId) {
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
    const now = new Date().toISOString();
    if (this.#attempt !== null) {
      const { entry, record } = this.#attempt;
      if (record.status === "running") {
        record.status = "interrupted";
        record.finished_at = now;
        record.reason = failure.message;
      }
      entry.status = "interrupted";
      entry.reason = failure.message;
    }
    this.#session?.interrupt();
    await this.#closeTranscript().catch(() => {});
    await this.#saveState().catch(() => {});
    await this.#hooks.abandon?.().catch(() => {});
  }

  async #runPrompts(): Promise<[RunStatus, string | null]> {
    const completed = new Set<string>();
    for (const planned of this.#plan) {
      const { prompt } = planned;
      if (this.#aborted) {
        return ["interrupted", "interrupted before prompt " + prompt.id];
      }
      if (this.#doneBefore.has(prompt.id)) {
        // Completed by an earlier process of this run: the run continues after it.
        completed.add(prompt.id);
        this.#outcomes[prompt.id] = {
          status: "completed",
          reason: "completed before the run was resumed",
          attempts: [],
        };
        continue;
      }
      const blockers = prompt.depends_on.filter((id) =>
        !completed.has(id) && this.#state.prompts[id]?.status !== "completed"
      );
      if (blockers.length > 0) {
        const reason = `waiting for ${
          blockers.map((id) =>
            `${id} (${this.#state.prompts[id]?.status ?? "not run"})`
          )
            .join(", ")
        }`;
        const entry = this.#promptState(prompt.id, prompt.name);
        entry.status = "blocked";
        entry.reason = reason;
        entry.blocked_by = blockers;
        this.#outcomes[prompt.id] = { status: "blocked", reason, attempts: [] };
        await this.#saveState();
        await this.#emit(
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
      const outcome = await this.#runPrompt(planned);
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

  #promptState(id: string, name: string): PromptState {
    const existing = this.#state.prompts[id];
    if (existing) {
      existing.name = name;
      existing.run_id = this.#runId;
      existing.updated_at = new Date().toISOString();
      return existing;
    }
    const created: PromptState = {
      status: "running",
      name,
      run_id: this.#runId,
      updated_at: new Date().toISOString(),
      attempts: [],
      last_verifier: null,
      failure_class: null,
      reason: null,
    };
    this.#state.prompts[id] = created;
    return created;
  }

  async #runPrompt(planned: PlannedPrompt): Promise<PromptOutcome> {
    const { prompt, provider, model } = planned;
    const entry = this.#promptState(prompt.id, prompt.name);
    delete entry.blocked_by;
    const roots = [
      prompt.cwd,
      ...prompt.targets.map((name) =>
        this.#packet.repos.find((repo) => repo.name === name)!.path
      ),
    ];
    const ignore = this.#stateRoot === null ? [] : [this.#stateRoot];
    const baseline = await probeWorkspace(roots, ignore);
    const modes: AttemptMode[] = [];
    let retries = 0;
    let repairs = 0;
    let mode: AttemptMode = "run";
    let text = prompt.body;
    let outcome: PromptOutcome;
    // A resumed run continues the numbering of its attempts.
    const first = 1 + Math.max(
      0,
      ...entry.attempts.filter((a) => a.run_id === this.#runId).map((a) =>
        a.attempt
      ),
    );
    for (let attempt = first;; attempt++) {
      modes.push(mode);
      const record: AttemptRecord = {
        run_id: this.#runId,
        attempt,
        mode,
        status: "running",
        started_at: new Date().toISOString(),
        finished_at: null,
        resumes: 0,
        failure_class: null,
        reason: null,
        verifier: null,
        transcript: null,
      };
      entry.attempts.push(record);
      this.#attempt = { entry, record };
      entry.status = "running";
      entry.updated_at = record.started_at;
      this.#current = { prompt: prompt.id, attempt };
      await this.#openTranscript(prompt.id, attempt, record, text);
      await this.#saveState();
      const started = {
        prompt_id: prompt.id,
        name: prompt.name,
        attempt,
        mode,
        provider: provider.name,
        model,
      };
      await this.#hooks.promptStarted?.({
        ...started,
        max_steers: prompt.recovery.max_steers,
      });
      await this.#emit("prompt_started", started, prompt.id, attempt);
      const before = await probeWorkspace(roots, ignore);
      const session = await this.#runSession(
        planned,
        { attempt, ordinal: attempt - first + 1 },
        mode,
        text,
      );
      record.resumes = session.resumes;
      record.failure_class = session.failure?.failure_class ?? null;
      if (session.interrupted) {
        record.status = "interrupted";
        record.finished_at = new Date().toISOString();
        record.reason = "the run was interrupted";
        outcome = await this.#finishPrompt(
          planned,
          entry,
          "interrupted",
          record.reason,
          modes,
        );
        break;
      }
      let enforced: EnforcedContract | null = null;
      let contractError: string | null = null;
      try {
        enforced = await this.#enforced(prompt);
      } catch (error) {
        // An unreadable contract stops this prompt's verification: no verdict.
        contractError = (error as Error).message;
      }
      const report: VerifyReport = enforced === null
        ? { passed: false, items: [], failures: 0, faults: 1 }
        : await this.#whileIdle(
          verifyContract(enforced.contract, {
            cwd: prompt.cwd,
            repos: Object.fromEntries(
              this.#packet.repos.map((repo) => [repo.name, repo.path]),
            ),
            ignore,
            baseline,
          }),
        );
      if (enforced !== null) this.#recordAmendments(entry, enforced);
      await this.#emit(
        "verification_finished",
        {
          prompt_id: prompt.id,
          passed: report.passed,
          failures: report.failures,
          faults: report.faults,
          items: report.items.map(({ clause, label, status, reason }) => ({
            clause,
            label,
            status,
            reason,
          })),
          ...(contractError === null ? {} : { error: contractError }),
        },
        prompt.id,
        attempt,
      );
      const after = await probeWorkspace(roots, ignore);
      const decision: Decision = contractError !== null
        ? {
          kind: "verifier_fault",
          reason: `cannot verify: ${contractError}`,
        }
        : decideOutcome({
          failure: session.failure,
          report,
          retries,
          repairs,
          recovery: prompt.recovery,
          workspace_changed: probesDiffer(before, after) ||
            (Object.keys(after).length === 0 && evidenceOfWork(report)),
          ...(this.#options.random ? { random: this.#options.random } : {}),
        });
      record.finished_at = new Date().toISOString();
      record.verifier = report;
      record.reason = decision.reason;
      entry.last_verifier = report;
      entry.failure_class = session.failure?.failure_class ?? null;
      if (decision.kind === "complete") {
        record.status = "completed";
        outcome = await this.#finishPrompt(
          planned,
          entry,
          "completed",
          decision.reason,
          modes,
        );
        break;
      }
      if (decision.kind === "retry") {
        record.status = "failed";
        entry.status = "retry_scheduled";
        entry.reason = decision.reason;
        await this.#saveState();
        await this.#emit(
          "retry_scheduled",
          {
            prompt_id: prompt.id,
            failure_class: session.failure?.failure_class ?? "unknown",
            delay_ms: decision.delay_ms,
            reason: decision.reason,
            next_attempt: attempt + 1,
          },
          prompt.id,
          attempt,
        );
        await this.#whileIdle(sleep(decision.delay_ms, this.#abort.signal));
        if (this.#aborted) {
          outcome = await this.#finishPrompt(
            planned,
            entry,
            "interrupted",
            "the run was interrupted",
            modes,
          );
          break;
        }
        retries++;
        mode = "retry";
        continue;
      }
      if (decision.kind === "repair") {
        record.status = session.failure ? "failed" : "verification_failed";
        entry.status = "repairing";
        entry.reason = decision.reason;
        await this.#saveState();
        repairs++;
        mode = "repair";
        text = buildRepairPrompt(
          prompt.body,
          report,
          session.failure
            ? `${session.failure.failure_class}: ${session.failure.message}`
            : null,
        );
        continue;
      }
      const final = decision.kind === "provider_failed"
        ? "failed"
        : decision.kind;
      record.status = final === "failed" ? "failed" : final;
      outcome = await this.#finishPrompt(
        planned,
        entry,
        final,
        decision.reason,
        modes,
      );
      break;
    }
    return outcome;
  }

  async #finishPrompt(
    planned: PlannedPrompt,
    entry: PromptState,
    status: PromptState["status"],
    reason: string | null,
    modes: AttemptMode[],
  ): Promise<PromptOutcome> {
    const { prompt } = planned;
    entry.status = status;
    entry.reason = reason;
    entry.updated_at = new Date().toISOString();
    const steers = this.#hooks.steerCount?.(prompt.id) ?? 0;
    if (steers > 0) {
      entry.steered = true;
      entry.steer_count = steers;
      if (this.#stateRoot !== null) {
        entry.interventions_file = `interventions/${prompt.id}.jsonl`;
      }
    } else {
      entry.steered = false;
      delete entry.steer_count;
      delete entry.interventions_file;
    }
    await this.#closeTranscript();
    await this.#refuseWaitingSteers(
      prompt.id,
      `prompt ${prompt.id} finished (${status}) before the steer could be delivered`,
    );
    this.#current = null;
    await this.#saveState();
    const outcome = { status, reason, attempts: modes };
    this.#outcomes[prompt.id] = outcome;
    const attempt = entry.attempts.at(-1)?.attempt ?? modes.length;
    await this.#emit(
      status === "completed" ? "prompt_completed" : "prompt_failed",
      { prompt_id: prompt.id, status, reason, attempts: modes.length },
      prompt.id,
      attempt,
    );
    return outcome;
  }

  /**
   * The contract this verification enforces: exactly what `control contract`
   * shows now. The prompt file is read again rather than taken from the
   * packet loaded at start, since `amend --persist` rewrites it (and records
   * the change as persisted, which replay skips) while the prompt may run.
   */
  async #enforced(prompt: PromptSpec): Promise<EnforcedContract> {
    const repos = this.#packet.repos.map((repo) => repo.name);
    if (this.#options.contract) {
      const { packet } = await currentContract(prompt, {
        stateRoot: null,
        repos,
      });
      return await this.#options.contract(prompt.id, packet);
    }
    const { contract, amendments, amendments_file } = await currentContract(
      prompt,
      { stateRoot: this.#stateRoot, repos },
    );
    return { contract, amendments, amendments_file };
  }

  #recordAmendments(entry: PromptState, enforced: EnforcedContract): void {
    if (enforced.amendments.length > 0) {
      entry.amended = true;
      entry.amendments = enforced.amendments;
      if (enforced.amendments_file) {
        entry.amendments_file = enforced.amendments_file;
      }
    } else {
      entry.amended = false;
      delete entry.amendments;
      delete entry.amendments_file;
    }
  }

  async #runSession(
    planned: PlannedPrompt,
    { attempt, ordinal }: { attempt: number; ordinal: number },
    mode: AttemptMode,
    text: string,
  ): Promise<SessionOutcome> {
    const { prompt, provider, model } = planned;
    this.#providerName = provider.name;
    this.#cwd = prompt.cwd;
    const request: SessionRequest = {
      prompt_id: prompt.id,
      attempt,
      ordinal,
      mode,
      text,
      cwd: prompt.cwd,
      repos: Object.fromEntries(
        this.#packet.repos.map((r) => [r.name, r.path]),
      ),
      model,
      allowed_tools: prompt.allowed_tools,
      permission_mode: prompt.permission_mode,
      script: prompt.simulate,
      signal: this.#abort.signal,
    };
    let session: Session;
    try {
      session = await provider.start(request);
    } catch (error) {
      const message = `cannot start ${provider.name} session: ${
        (error as Error).message
      }`;
      await this.#emit(
        "error_occurred",
        {
          error_code: "start_failed",
          error_message: message,
        },
        prompt.id,
        attempt,
      );
      return {
        failure: {
          ...classifyFailure({ message }),
          failure_class: "start_failed",
          retryable: false,
          repairable: false,
          resumeable: false,
        },
        interrupted: false,
        resumes: 0,
      };
    }
    let failure: FailureEnvelope | null = null;
    let resumes = 0;
    let timedOut = false;
    const timer = prompt.timeout_ms === null ? undefined : setTimeout(() => {
      timedOut = true;
      this.#session?.interrupt();
    }, prompt.timeout_ms);
    try {
      for (;;) {
        this.#session = session;
        try {
          for await (const event of this.#paced(session)) {
            await this.#emit(event.type, event.data, prompt.id, attempt);
            if (
              failure === null &&
              (event.type === "error_occurred" || event.type === "run_failed")
            ) {
              failure = classifyFailure(
                event.data.provider_error ??
                  { message: event.data.error_message },
              );
            }
            await this.#boundary(false);
            if (this.#aborted) break;
          }
        } catch (error) {
          failure ??= classifyFailure({
            message: `the ${provider.name} stream failed: ${
              (error as Error).message
            }`,
          });
        }
        if (this.#aborted) {
          session.interrupt();
          return { failure, interrupted: true, resumes };
        }
        if (timedOut && failure === null) {
          failure = classifyFailure({
            kind: "transport_timeout",
            message:
              `the session ran longer than its timeout of ${prompt.timeout_ms} ms`,
          });
        }
        const steer = this.#delivering;
        if (steer !== null && !timedOut) {
          this.#delivering = null;
          await session.close();
          try {
            session = await provider.resume(session.meta, {
              ...request,
              text: steer.text + STEER_SUFFIX,
              steer: steer.text,
              cause: "steer",
            });
          } catch (error) {
            await this.#settleSteer(
              steer,
              false,
              undefined,
              `cannot resume the session: ${(error as Error).message}`,
            );
            break;
          }
          await this.#settleSteer(steer, true, "interrupt_and_resume");
          continue;
        }
        if (
          failure !== null && failure.resumeable &&
          !failure.local_deterministic &&
          resumes < prompt.recovery.resume_attempts && !timedOut
        ) {
          resumes++;
          await this.#emit(
            "session_resumed",
            {
              prompt_id: prompt.id,
              cause: "failure",
              failure_class: failure.failure_class,
              resume: resumes,
              limit: prompt.recovery.resume_attempts,
            },
            prompt.id,
            attempt,
          );
          await session.close();
          try {
            session = await provider.resume(session.meta, {
              ...request,
              text: "Continue",
              cause: "failure",
            });
          } catch (error) {
            failure = {
              ...failure,
              message: `${failure.message}; resume failed: ${
                (error as Error).message
              }`,
            };
            break;
          }
          failure = null;
          continue;
        }
        break;
      }
    } finally {
      clearTimeout(timer);
      this.#session = null;
      await session.close();
      if (this.#delivering !== null) {
        const steer = this.#delivering;
        this.#delivering = null;
        this.#steers.unshift(steer);
      }
    }
    return { failure, interrupted: false, resumes };
  }

  /**
   * Yields a session's events, consuming control requests at least once a
   * second while the provider is quiet (a long think, a slow tool), so a view
   * change or a steer never waits for the next event.
   */
  async *#paced(session: Session): AsyncGenerator<ProviderEvent> {
    const iterator = session.events[Symbol.asyncIterator]();
    try {
      for (;;) {
        const next = iterator.next();
        let result: IteratorResult<ProviderEvent> | null = null;
        while (result === null) {
          result = await settleWithin(next, IDLE_TICK_MS);
          if (result === null) {
            await this.#boundary(true);
            if (this.#aborted) session.interrupt();
          }
        }
        if (result.done) return;
        yield result.value;
      }
    } finally {
      await iterator.return?.();
    }
  }

  /** Runs `work` while consuming control requests at least once a second. */
  async #whileIdle<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const settled = work.finally(() => {
      done = true;
      wake.abort();
    });
    const wake = new AbortController();
    while (!done) {
      await sleep(500, wake.signal);
      if (!done) await this.#boundary(true);
    }
    return await settled;
  }

  async #boundary(idle: boolean): Promise<void> {
    const commands: BoundaryCommand[] = this.#hooks.boundary
      ? await this.#hooks.boundary({ idle })
      : [];
    for (const command of commands) {
      if (command.command === "set_view") await this.#applyView(command.view);
      else this.#steers.push(command);
    }
    await this.#deliverSteer();
  }

  async #applyView(change: Partial<ViewSettings>): Promise<void> {
    const next = { ...this.#view, ...change };
    const replace = next.log_mode !== this.#view.log_mode;
    this.#view = next;
    if (replace) {
      // A new renderer drops the old one's counters, but a line it left open
      // is closed, and what it showed (a message that streamed, tool calls
      // under way) is handed over so that nothing is shown twice.
      const handover = this.#renderer.handover();
      await this.#writeText(this.#renderer.detach());
      this.#renderer = createRenderer(next, { handover });
    } else {
      this.#renderer.setView(next);
    }
    await this.#hooks.viewChanged?.({ ...next });
  }

  async #deliverSteer(): Promise<void> {
    const session = this.#session;
    if (session === null || this.#delivering !== null) return;
    const steer = this.#steers[0];
    if (steer === undefined) return;
    this.#steers.shift();
    if (session.acceptsInputAfterStart) {
      try {
        await session.send(steer.text);
      } catch (error) {
        await this.#settleSteer(
          steer,
          false,
          undefined,
          `the live session refused it: ${(error as Error).message}`,
        );
        return;
      }
      await this.#settleSteer(steer, true, "send_input");
      return;
    }
    this.#delivering = steer;
    session.interrupt();
  }

  async #settleSteer(
    steer: SteerCommand,
    delivered: boolean,
    delivery?: "send_input" | "interrupt_and_resume",
    reason?: string,
  ): Promise<void> {
    const attempt = this.#current?.prompt === steer.prompt_id
      ? this.#current.attempt
      : null;
    await this.#hooks.steerSettled?.({
      command: steer,
      delivered,
      ...(delivery ? { delivery } : {}),
      ...(reason ? { reason } : {}),
      attempt,
      provider: this.#providerName,
    });
    if (delivered) {
      await this.#emit(
        "prompt_steered",
        {
          prompt_id: steer.prompt_id,
          text: steer.text,
          author: steer.author,
          delivery,
          request_id: steer.request_id,
        },
        steer.prompt_id,
        attempt,
      );
    }
  }

  async #refuseWaitingSteers(promptId: string, reason: string): Promise<void> {
    const waiting = this.#steers.filter((steer) =>
      steer.prompt_id === promptId
    );
    this.#steers = this.#steers.filter((steer) => steer.prompt_id !== promptId);
    for (const steer of waiting) {
      await this.#settleSteer(steer, false, undefined, reason);
    }
  }

  async #emit(
    type: RunEvent["type"],
    data: Record<string, unknown>,
    promptId: string | null,
    attempt: number | null,
  ): Promise<void> {
    const event: RunEvent = {
      v: 1,
      seq: ++this.#seq,
      at: new Date().toISOString(),
      run_id: this.#runId,
      prompt_id: promptId,
      attempt,
      type,
      data,
    };
    await this.#hooks.observe?.(event);
    await this.#options.onEvent?.(event);
    if (type === "tool_call_started") {
      this.#tools.set(String(data.tool_call_id ?? ""), {
        name: String(data.tool_name ?? ""),
        input: (data.tool_input ?? {}) as Record<string, unknown>,
      });
    }
    const text = this.#renderer.render(event, await this.#renderContext(event));
    for (const sink of this.#sinks()) await sink.event(event, text);
  }

  /** Text not tied to an event (a footer, a line closed on a renderer swap). */
  async #writeText(text: string): Promise<void> {
    if (text === "") return;
    for (const sink of this.#sinks()) await sink.text(text);
  }

  #sinks(): RenderSink[] {
    const sinks: RenderSink[] = [];
    if (this.#outputSink) sinks.push(this.#outputSink);
    if (this.#transcriptSink) sinks.push(this.#transcriptSink);
    return sinks;
  }

  /**
   * What the renderer cannot read itself: the current `git diff` of a
   * path-only change, when the studio view shows full diffs.
   */
  async #renderContext(event: RunEvent): Promise<RenderContext> {
    if (
      this.#renderer.mode !== "studio" || this.#view.diff !== "full" ||
      this.#cwd === null
    ) {
      return {};
    }
    const paths = pathOnlyChanges(event, this.#tools);
    if (paths.length === 0) return {};
    return { current_diffs: await readCurrentDiffs(paths, this.#cwd) };
  }

  async #openTranscript(
    promptId: string,
    attempt: number,
    record: AttemptRecord,
    text: string,
  ): Promise<void> {
    await this.#closeTranscript();
    const root = this.#stateRoot;
    if (root === null) return;
    const dir = join(root, "logs", this.#runId);
    const path = join(dir, `${promptId}-attempt-${attempt}.log`);
    record.transcript = relative(root, path);
    this.#transcript = await this.#guardLinks(async () => {
      await ensurePrivateDir(dir, { within: root });
      try {
        // Never truncates, never follows a link: a transcript is kept whole.
        return await createNewFile(path, { within: root });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
        const existing = await Deno.lstat(path);
        if (existing.isSymlink) throw new LinkRefusedError(path);
        return await openAppend(path, { within: root });
      }
    }).catch((error) => {
      throw environmentFailure(error, path);
    });
    const header = [
      `run ${this.#runId}  prompt ${promptId}  attempt ${attempt} (${record.mode})`,
      `started ${record.started_at}`,
      "--- prompt text ---",
      text.trimEnd(),
      "--- events ---",
      "",
    ].join("\n");
    const file = this.#transcript;
    const write = (text: string): Promise<void> =>
      writeAll(file, new TextEncoder().encode(text)).catch((error) => {
        throw environmentFailure(error, path);
      });
    this.#transcriptSink = logFileSink(write);
    // Through the sink: the prompt text reaches the file without escapes too.
    await this.#transcriptSink.text(header);
  }

  /**
   * Runs file work in the state root; a link found on the way is moved
   * aside (never followed), reported to the hooks, and the work tried again.
   */
  async #guardLinks<T>(work: () => Promise<T>): Promise<T> {
    for (let tries = 0;; tries++) {
      try {
        return await work();
      } catch (error) {
        if (!(error instanceof LinkRefusedError) || tries >= 4) throw error;
        const refusal = await moveLinkAside(this.#stateRoot!, error.path);
        if (refusal === null) continue;
        if (this.#hooks.linkRefused) await this.#hooks.linkRefused(refusal);
        else {
          await this.#options.warn?.(
            `${
              JSON.stringify(refusal.path)
            } in the state root was a symbolic link; it was moved aside to ${
              JSON.stringify(refusal.moved_to)
            } and never followed`,
          );
        }
      }
    }
  }

  async #closeTranscript(): Promise<void> {
    const file = this.#transcript;
    this.#transcript = null;
    this.#transcriptSink = null;
    if (file) {
      await file.sync().catch(() => {});
      file.close();
    }
  }

  async #saveState(): Promise<void> {
    const root = this.#stateRoot;
    if (root === null) return;
    try {
      await this.#guardLinks(() => writeState(root, this.#state));
    } catch (error) {
      throw environmentFailure(error, join(root, STATE_FILE));
    }
  }
}

/**
 * An error of the environment (a full disk, an I/O error) as an
 * {@linkcode EnvironmentError} naming the path; any other error unchanged.
 */
function environmentFailure(error: unknown, path: string): unknown {
  if (error instanceof EnvironmentError || !isEnvironmentError(error)) {
    return error;
  }
  return new EnvironmentError(
    `Cannot write "${path}": ${(error as Error).message.replace(/:.*$/, "")}`,
    {
      code: "ENVIRONMENT",
      hint:
        "Free space (or fix the file system), then continue the run with 'prompt_runner run PACKET --resume'",
      cause: error,
    },
  );
}

function evidenceOfWork(report: VerifyReport): boolean {
  return report.items.some((item) =>
    item.status === "pass" &&
    (item.clause === "files_exist" || item.clause === "contains" ||
      item.clause === "matches")
  );
}

/**
 * Runs a packet: each selected prompt in dependency order, with attempts,
 * failure-resume, verification and recovery (retry, repair), fail-fast.
 * Events go to the hooks, `onEvent` and the output; state goes to the state
 * root (`state.json`, `logs/`, `run.lock`) unless the run is in-memory.
 *
 * Requires `--allow-read`, `--allow-write` (the state root and the
 * workspace), `--allow-run` (git and verify commands), `--allow-env` and
 * `--allow-sys=hostname,uid`.
 *
 * @param packet A packet directory, or a loaded packet.
 * @param options Selection, provider, view, state root, output and hooks.
 * @returns How the run ended and each prompt's outcome. A failed prompt is
 * a result, not an exception.
 * @throws {NotFoundError} for a missing packet, prompt id or repo.
 * @throws {UsageError} for an invalid packet or an unavailable provider.
 * @throws {StateError} when another live run holds the state root.
 *
 * @example Usage
 * ```ts
 * import { runPacket } from "@prompt-runner/prompt-runner";
 * import assert from "node:assert/strict";
 *
 * const dir = await Deno.makeTempDir();
 * await Deno.mkdir(`${dir}/prompts`);
 * await Deno.writeTextFile(
 *   `${dir}/prompt_runner_packet.md`,
 *   "---\nname: hello\nprovider: simulated\n---\n",
 * );
 * await Deno.writeTextFile(
 *   `${dir}/prompts/01_greet.prompt.md`,
 *   [
 *     "---",
 *     "verify: {files_exist: [HELLO.md]}",
 *     "simulate:",
 *     "  attempts:",
 *     "    - writes: [{path: HELLO.md, text: hi}]",
 *     "---",
 *     "Write HELLO.md.",
 *   ].join("\n"),
 * );
 * const result = await runPacket(dir, { stateRoot: null });
 * assert.equal(result.status, "completed");
 * await Deno.remove(dir, { recursive: true });
 * ```
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
