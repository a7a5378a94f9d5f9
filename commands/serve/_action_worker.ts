/**
 * The worker a dashboard action runs in: confined to its run exactly as a
 * control command is (`callConfined` in `commands/control/_confined.ts`),
 * it does the one action it is sent and posts back its answer or its
 * error.
 *
 * @module
 */

import { serveCall } from "../control/_worker.ts";
import {
  type ActionFields,
  type ActionName,
  type ActionTarget,
  runAction,
} from "./_run_action.ts";

/** What the main thread sends: the action, its form's fields, its target. */
export interface ActionCall {
  action: ActionName;
  fields: ActionFields;
  target: ActionTarget;
}

serveCall(async (request) => {
  const { action, fields, target } = request as ActionCall;
  return await runAction(action, fields, target);
});
