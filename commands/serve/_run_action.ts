/**
 * What a dashboard action does, in the worker confined to its run (see
 * `_actions.ts`): a posted form's fields turned into client API calls
 * (steer, set_view, amend, relax) under the author `web:<name>`, answered
 * with the plane's decision when it comes within a few seconds. Bad input
 * is refused with the message the CLI gives for it.
 *
 * @module
 */

import {
  amend,
  contract,
  type ContractTarget,
  NotFoundError,
  openFleetClient,
  relax,
  type RequestOutcome,
  requestOutcome,
  type RunRef,
  type SentRequest,
  setView,
  steer,
  UsageError,
  VIEW_OPTIONS,
  type ViewKey,
} from "../../mod.ts";
import type { FleetActionPlace } from "./_fleet_runs.ts";

/** The action paths, by their last segment. */
export const ACTION_NAMES = ["steer", "view", "amend", "relax"] as const;

/** An action's name. */
export type ActionName = typeof ACTION_NAMES[number];

/**
 * What the main thread sends the action's worker: the action, its form's
 * fields, its target. Kept here, not in the worker's module, so that the
 * main thread never loads that module.
 */
export interface ActionCall {
  /** The action. */
  action: ActionName;
  /** Its form's fields. */
  fields: ActionFields;
  /** Its run and author. */
  target: ActionTarget;
}

/** How long a post waits for the plane's decision. */
const DECISION_MS = 5_000;

/** What an action came to. */
export interface ActionResult {
  /** The HTTP status of a JSON answer. */
  status: number;
  /** The JSON answer. */
  body: {
    request_id?: string;
    outcome: string;
    reason: string | null;
  };
  /** Where a plain form post is sent next (query of the run page). */
  query: Record<string, string>;
}

/** Where an action applies. */
export interface ActionTarget {
  /** The run (a fleet run's address, without its transport). */
  ref: RunRef;
  /** The run's packet, for amend and relax (none for a fleet run). */
  packet_dir: string | null;
  /** The recorded author (`web:<name>`). */
  author: string;
  /** For a fleet run: its fleet and names, to reach it from the worker. */
  fleet: FleetActionPlace | null;
}

/** Where a run's contract is changed (`null`: its packet is not known). */
type ContractPlace =
  | { packet_dir: string; state_root: string }
  | ContractTarget
  | null;

/** A posted form's fields: the first value given for each name. */
export type ActionFields = Record<string, string>;

function field(form: ActionFields, name: string): string {
  const value = form[name];
  return typeof value === "string" ? value : "";
}

/** Waits for a request's decision: applied/rejected, else what is known. */
async function decision(
  ref: RunRef,
  sent: SentRequest,
): Promise<RequestOutcome | null> {
  const deadline = Date.now() + DECISION_MS;
  let last: RequestOutcome | null = null;
  for (;;) {
    last = await requestOutcome(ref, sent.request_id).catch(() => last);
    if (last?.final) return last;
    if (Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function requested(
  action: ActionName,
  target: ActionTarget,
  sent: SentRequest,
): Promise<ActionResult> {
  const found = await decision(target.ref, sent);
  const outcome = found === null || found.outcome === "pending" ||
      found.outcome === "received"
    ? "accepted"
    : found.outcome;
  return {
    status: 200,
    body: {
      request_id: sent.request_id,
      outcome,
      reason: found?.reason ?? null,
    },
    query: { action, request: sent.request_id },
  };
}

/** An amend or relax entry from the form's one `value`. */
function entryOf(clause: string, value: string): unknown {
  if (clause === "contains") {
    const at = value.indexOf("=");
    if (at <= 0 || at === value.length - 1) {
      throw new UsageError(
        `Invalid --add-contains ${JSON.stringify(value)}: expected PATH=TEXT`,
      );
    }
    return { path: value.slice(0, at), text: value.slice(at + 1) };
  }
  if (clause === "commands") {
    const [exec, ...args] = value.trim().split(/\s+/);
    if (!exec) throw new UsageError("--add-command needs a command to run");
    return args.length ? { exec, args } : { exec };
  }
  return value;
}

/**
 * Does an action: checks the fields as the CLI checks its flags, then
 * calls the client API; on a fleet run, through a client of its fleet
 * opened here, in the worker confined to that fleet's servers.
 *
 * @returns The answer: the plane's outcome, or `recorded`.
 * @throws {PromptRunnerError} for bad input or a refusal (a fleet that
 * cannot be reached: exit 4).
 */
export async function runAction(
  action: ActionName,
  form: ActionFields,
  target: ActionTarget,
): Promise<ActionResult> {
  if (target.fleet === null) {
    return await act(
      action,
      form,
      target,
      target.packet_dir === null ? null : {
        packet_dir: target.packet_dir,
        state_root: target.ref.state_root,
      },
    );
  }
  const { choice, run } = target.fleet;
  const client = await openFleetClient({
    url: choice.parsed,
    ...(choice.creds_file === null ? {} : { credsFile: choice.creds_file }),
    ...(choice.ca_file === null ? {} : { caFile: choice.ca_file }),
  });
  try {
    const ref = client.ref(run);
    return await act(action, form, { ...target, ref }, {
      transport: client.transport,
      state_root: ref.state_root,
    });
  } finally {
    await client.close();
  }
}

async function act(
  action: ActionName,
  form: ActionFields,
  target: ActionTarget,
  where: ContractPlace,
): Promise<ActionResult> {
  const author = target.author;
  switch (action) {
    case "steer": {
      const text = field(form, "text");
      if (text.trim() === "") {
        throw new UsageError(
          "A steer needs something to say: the text is empty",
          { code: "EMPTY_STEER" },
        );
      }
      const prompt = field(form, "prompt").trim();
      const sent = await steer(target.ref, text, {
        author,
        ...(prompt === "" ? {} : { promptId: prompt }),
      });
      return await requested(action, target, sent);
    }
    case "view": {
      const settings: Partial<Record<ViewKey, string>> = {};
      for (const key of Object.keys(VIEW_OPTIONS) as ViewKey[]) {
        const value = field(form, key).trim();
        if (value !== "") settings[key] = value;
      }
      if (Object.keys(settings).length === 0) {
        throw new UsageError("Name at least one setting to change");
      }
      const sent = await setView(target.ref, settings, { author });
      return await requested(action, target, sent);
    }
    case "amend":
    case "relax": {
      const prompt = field(form, "prompt").trim();
      const clause = field(form, "clause").trim();
      const reason = field(form, "reason");
      const persist = field(form, "persist") === "on";
      if (action === "relax" && field(form, "confirm") !== "on") {
        throw new UsageError(
          "Relaxing a contract needs confirmation: pass --confirm",
        );
      }
      if (reason.trim() === "") {
        throw new UsageError(
          `${
            action === "amend" ? "An amendment" : "A relaxation"
          } needs a reason: --reason is mandatory`,
        );
      }
      if (prompt === "") throw new UsageError("A prompt id is required");
      if (where === null) {
        throw new NotFoundError(
          "Cannot change the contract: the run's packet is not known",
        );
      }
      const record = action === "amend"
        ? await amend(where, prompt, {
          clause,
          entries: [entryOf(clause, field(form, "value"))],
          reason,
          persist,
          author,
        })
        : await relax(where, prompt, {
          clause,
          reason,
          confirm: true,
          persist,
          author,
        });
      // Its number among the prompt's amendments, for the page to name.
      const count = (await contract(where, record.prompt).catch(() => null))
        ?.amendments.length ?? 0;
      return {
        status: 200,
        body: { outcome: "recorded", reason: null },
        query: { action, amendment: String(count), prompt: record.prompt },
      };
    }
  }
}
