/**
 * The dashboard's actions (steer, set_view, amend, relax): a posted form is
 * read here, then the action runs in a worker confined to its run exactly
 * as the CLI's control command on it would be (the same scope: read and
 * write the state root, read the packet, write its `prompts/` only with
 * "also write it into the prompt file"; on a fleet run, connect to the
 * fleet's servers and nothing else, read no file but its creds), through
 * the same client API and its link refusals, so the dashboard has no power
 * a `control` command lacks. What the action does is in `_run_action.ts`.
 *
 * @module
 */

import { PromptRunnerError } from "../../mod.ts";
import { callConfined } from "../control/_confined.ts";
import type {
  ActionCall,
  ActionFields,
  ActionName,
  ActionResult,
  ActionTarget,
} from "./_run_action.ts";

export {
  ACTION_NAMES,
  type ActionName,
  type ActionResult,
  type ActionTarget,
} from "./_run_action.ts";

/** The worker every action runs in. */
const ACTION_WORKER = new URL("./_action_worker.ts", import.meta.url);

/**
 * How many actions run at once, each in its own worker; more wait their
 * turn, so a burst of posts cannot start a worker per post.
 */
const MAX_RUNNING = 4;

let running = 0;
const waiting: (() => void)[] = [];

/** Runs `work` once fewer than {@linkcode MAX_RUNNING} others run. */
async function inTurn<T>(work: () => Promise<T>): Promise<T> {
  if (running >= MAX_RUNNING) {
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running++;
  }
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next === undefined) running--;
    else next();
  }
}

function refused(
  action: ActionName,
  status: number,
  reason: string,
): ActionResult {
  return {
    status,
    body: { outcome: "refused", reason },
    query: { action, error: reason },
  };
}

/** A form's fields, the first value of each (files ignored). */
function fieldsOf(form: FormData): ActionFields {
  const fields: ActionFields = {};
  for (const [name, value] of form) {
    if (typeof value === "string" && !Object.hasOwn(fields, name)) {
      fields[name] = value;
    }
  }
  return fields;
}

/**
 * Runs an action from a posted form.
 *
 * @param redact Masks secrets in a refusal's words (a fleet's URL's).
 * @returns The answer: `refused` (400 bad input, 404 not found, 409 refused
 * by the run's state) or the plane's outcome.
 */
export async function postAction(
  action: ActionName,
  request: Request,
  target: ActionTarget,
  redact: (text: string) => string = (text) => text,
): Promise<ActionResult> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return refused(action, 400, "The form could not be read");
  }
  const fields = fieldsOf(form);
  const contractual = action === "amend" || action === "relax";
  try {
    return await inTurn(async () =>
      await callConfined(
        `web action "${action}"`,
        ACTION_WORKER,
        target.fleet !== null ? { fleet: target.fleet.choice } : {
          state_root: target.ref.state_root,
          packet_dir: contractual ? target.packet_dir : null,
        },
        target.fleet === null && contractual && fields.persist === "on",
        { action, fields, target } satisfies ActionCall,
      ) as ActionResult
    );
  } catch (error) {
    // Errors come back from the worker rebuilt: judged by their exit code.
    if (!(error instanceof PromptRunnerError)) throw error;
    const status = error.exitCode === 2
      ? 400
      : error.exitCode === 3
      ? 404
      : 409;
    return refused(action, status, redact(error.message));
  }
}
