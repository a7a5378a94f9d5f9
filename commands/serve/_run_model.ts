/**
 * A run page's model and a root's row: what the dashboard gathers through
 * the client API for a run page, and the outcome a page shows after a
 * plain form post.
 *
 * @module
 */

import {
  contract,
  type ContractView,
  currentSnapshot,
  DEFAULT_VIEW,
  type EventLine,
  eventLineBatches,
  loadPacket,
  log,
  NotFoundError,
  requestOutcome,
  type RunRef,
  type RunWord,
  type Snapshot,
  type StatusRollup,
  verifyLog,
} from "../../mod.ts";
import { foldTimeline, renderEvents } from "./_events_view.ts";
import type { RunPageModel, RunRow, ShownOutcome } from "./_model.ts";

/** A state root the dashboard watches. */
export interface WatchedRoot {
  /** Its key in URLs: the workspace id, or `r-` + 12 hex of its path's SHA-256. */
  key: string;
  /** What the operator named (workspace id, packet or state root). */
  target: string;
  /** The state root. */
  state_root: string;
  /** Its packet, when known. */
  packet_dir: string | null;
  /** Its workspace, when it is one's. */
  workspace_id: string | null;
  /**
   * For a fleet home (`serve --fleet`): its node and root names; its key is
   * `fleet:<node>.<root>` and its state root the fleet address
   * `fleet:<node>/<root>`. `null` for a state root on this machine.
   */
  fleet: { node: string; root: string } | null;
}

/** How many of the newest events a run page shows at first. */
export const SHOWN_EVENTS = 300;

/** A root's current snapshot, or `null`. */
export async function readSnapshot(
  stateRoot: string,
): Promise<Snapshot | null> {
  return await currentSnapshot(stateRoot).catch(() => null);
}

/** What a run page shows that depends on where the run lives. */
export interface RunParts {
  /** The run's row. */
  row: RunRow;
  /** The snapshot to show: the run's live one (a fleet run's latest). */
  snapshot: Snapshot | null;
  /** The packet's directory, when it is on this machine. */
  packet_dir: string | null;
  /** The packet's prompts, in order. */
  prompts: { id: string; name: string | null }[];
  /** Each prompt's contract: packet vs enforced, with amendments. */
  contracts: ContractView[];
}

/** What gathering a run page needs of the index. */
export interface PageSource {
  /** A run's stored events from `from` to `to` (up to its last with `null`). */
  readEvents(
    ref: RunRef,
    from: number,
    to: number | null,
  ): Promise<EventLine[]>;
  /** A run's reference for the client API. */
  refOf(root: WatchedRoot, runId: string): RunRef;
  /** What depends on where the run lives, or `null` when there is no such run. */
  parts(
    root: WatchedRoot,
    runId: string,
    events: EventLine[],
  ): Promise<RunParts | null>;
}

/** A finished run's word from its `run_finished` status. */
function stateOf(status: string | undefined): RunWord {
  if (status === "completed" || status === "interrupted") return status;
  if (status === undefined) return "runner_gone";
  return "failed";
}

/**
 * A run page's parts for a run of a state root on this machine: its row
 * (the root's, or one from its events when it is not the newest run), its
 * snapshot while it is the current run, its packet's prompts and contracts.
 *
 * @returns The parts, or `null` when the root holds no such run.
 */
export async function localParts(
  rowOfRoot: (root: WatchedRoot) => Promise<RunRow>,
  root: WatchedRoot,
  runId: string,
  events: EventLine[],
): Promise<RunParts | null> {
  const current = await readSnapshot(root.state_root);
  const isCurrent = current !== null && current.run_id === runId;
  if (events.length === 0 && !isCurrent) return null;
  let row = await rowOfRoot(root);
  if (row.run !== runId) {
    const last = events.at(-1)?.event;
    row = {
      ...emptyRow(root, runId),
      status: last?.type === "run_finished"
        ? stateOf(String(last.data?.status))
        : stateOf(undefined),
    };
  }
  const packetDir = root.packet_dir ?? current?.packet_dir ?? null;
  const packet = packetDir === null
    ? null
    : await loadPacket(packetDir).catch(() => null);
  const prompts = packet?.prompts.map((p) => ({ id: p.id, name: p.name })) ??
    [];
  const contracts: ContractView[] = [];
  if (packet !== null) {
    for (const prompt of prompts) {
      const view = await contract(
        { packet_dir: packet.dir, state_root: root.state_root },
        prompt.id,
      ).catch(() => null);
      if (view !== null) contracts.push(view);
    }
  }
  return {
    row,
    snapshot: isCurrent ? current : null,
    packet_dir: packet?.dir ?? packetDir,
    prompts,
    contracts,
  };
}

/**
 * Everything a run page shows.
 *
 * @returns The model, or `null` when the root holds no such run.
 */
export async function pageModelOf(
  index: PageSource,
  root: WatchedRoot,
  runId: string,
  query: URLSearchParams,
): Promise<RunPageModel | null> {
  const ref = index.refOf(root, runId);
  let events: EventLine[];
  try {
    events = await index.readEvents(ref, 1, null);
  } catch (error) {
    if (error instanceof NotFoundError) return null;
    throw error;
  }
  const parts = await index.parts(root, runId, events);
  if (parts === null) return null;
  const view = parts.snapshot?.view ?? { ...DEFAULT_VIEW };
  const shown = events.slice(-SHOWN_EVENTS);
  return {
    row: parts.row,
    state_root: root.state_root,
    packet_dir: parts.packet_dir,
    snapshot: parts.snapshot,
    view,
    prompts: parts.prompts,
    timeline: foldTimeline(
      events,
      parts.prompts,
      parts.contracts.flatMap((view) => view.amendments),
    ),
    // Rendered with what came before, so a tool's result knows its call.
    events: renderEvents(events, view, { from: shown[0]?.event.seq ?? 1 }),
    earlier: events.length - shown.length,
    log: await log(ref).catch(() => []),
    chain: root.fleet === null
      ? await verifyLog(root.state_root).catch(() => null)
      : null,
    contracts: parts.contracts,
    outcome: await shownOutcome(ref, query),
  };
}

const ACTIONS: Record<string, ShownOutcome["action"]> = {
  steer: "steer",
  set_view: "view",
  amend: "amend",
  relax: "relax",
};

/** The outcome a page shows after a plain form post (`?request=`, `?amendment=`, `?error=`). */
async function shownOutcome(
  ref: RunRef,
  query: URLSearchParams,
): Promise<ShownOutcome | null> {
  const error = query.get("error");
  const action = query.get("action");
  const asked = action !== null && Object.values(ACTIONS).includes(
      action as ShownOutcome["action"],
    )
    ? action as ShownOutcome["action"]
    : null;
  if (error !== null) {
    return { action: asked ?? "steer", outcome: "refused", reason: error };
  }
  if (query.get("amendment") !== null) {
    return { action: asked ?? "amend", outcome: "recorded", reason: null };
  }
  const request = query.get("request");
  if (request === null) return null;
  const found = await requestOutcome(ref, request).catch(() => null);
  if (found === null) return null;
  return {
    action: ACTIONS[found.command ?? ""] ?? asked ?? "steer",
    outcome: found.outcome,
    reason: found.reason,
  };
}

/** A row with nothing known but its run. */
function emptyRow(root: WatchedRoot, runId: string): RunRow {
  return {
    root: root.key,
    run: runId,
    target: root.target,
    packet: null,
    status: "never_run",
    progress: { completed: null, selected: null },
    current: { id: null, name: null },
    attempt: { number: null, mode: null, detail: null },
    elapsed_ms: null,
    input_tokens: null,
    output_tokens: null,
    cost_usd: null,
    last_event_age_ms: null,
    runner: "none",
    attention: null,
  };
}

/** A root's row from its rollup. */
export function rowOf(
  root: WatchedRoot,
  rollup: StatusRollup,
  snapshot: Snapshot | null,
): RunRow {
  return {
    root: root.key,
    run: rollup.run.id ?? "",
    target: root.target,
    packet: snapshot?.packet ?? null,
    status: rollup.run.status,
    progress: {
      completed: rollup.progress.completed,
      selected: rollup.progress.selected,
    },
    current: rollup.progress.current,
    attempt: rollup.attempt,
    elapsed_ms: rollup.run.elapsed_ms,
    input_tokens: rollup.provider.input_tokens,
    output_tokens: rollup.provider.output_tokens,
    cost_usd: rollup.provider.cost_usd,
    last_event_age_ms: rollup.provider.last_event_age_ms,
    runner: rollup.lease.state,
    attention: rollup.attention,
  };
}

/**
 * Reads a run's stored events from `from` up to `to` (inclusive), without
 * waiting for events not written yet: a live run's stream is read up to
 * `to`, or up to what its snapshot (`current`) counts when `to` is `null`.
 *
 * @throws {NotFoundError} when the state root has no record of the run.
 */
export async function readStoredEvents(
  ref: RunRef,
  current: Snapshot | null,
  from: number,
  to: number | null,
): Promise<EventLine[]> {
  const live = current !== null && current.run_id === ref.run_id &&
    current.status === "running";
  const limit = to ?? (live ? current.last_seq : Infinity);
  const lines: EventLine[] = [];
  if (limit < from) return lines;
  const abort = new AbortController();
  // A range past what is written ends the read instead of waiting for it.
  const timer = setTimeout(() => abort.abort(), live ? 1_500 : 10_000);
  try {
    outer: for await (
      const batch of eventLineBatches(ref, { from, signal: abort.signal })
    ) {
      for (const line of batch) {
        if (line.event.seq > limit) break outer;
        lines.push(line);
      }
      if ((lines.at(-1)?.event.seq ?? 0) >= limit) break;
    }
  } catch (error) {
    // A run whose runner is gone still has its events to show.
    if (error instanceof NotFoundError) throw error;
  } finally {
    clearTimeout(timer);
  }
  return lines;
}
