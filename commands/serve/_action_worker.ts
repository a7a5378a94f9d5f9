/**
 * The worker a dashboard action runs in: confined to its run exactly as a
 * control command is (`callConfined` in `commands/control/_confined.ts`),
 * it does the one action it is sent and posts back its answer or its
 * error.
 *
 * @module
 */

import { serveCall } from "../control/_worker.ts";
import { type ActionCall, runAction } from "./_run_action.ts";

serveCall(async (request) => {
  const { action, fields, target } = request as ActionCall;
  return await runAction(action, fields, target);
});
