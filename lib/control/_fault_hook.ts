/**
 * The test fault hook: kills the runner the way a SIGKILL does, at a chosen
 * step of request processing, so the crash-recovery tests can stop it
 * anywhere. Installed only by the tests' entry
 * (`tests/_helpers/fault_main.ts`); a production plane never imports it.
 *
 * @module
 */

import { FAULT_STEPS, type FaultHook } from "./_fault_steps.ts";

/** A hook that kills this process at `step`, or `undefined` for an unknown step. */
export function faultHookAt(step: string): FaultHook | undefined {
  if (!(FAULT_STEPS as readonly string[]).includes(step)) return undefined;
  return (reached) => {
    if (reached === step) Deno.kill(Deno.pid, "SIGKILL");
  };
}
