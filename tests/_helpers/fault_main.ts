/**
 * The CLI with a test fault installed: `PROMPT_RUNNER_TEST_FAULT` names a
 * step of request processing at which the runner kills itself
 * (`request_decided`, `steer_recorded`, …), `fleet_request_written` (a
 * runner's fleet bridge kills it once a request file from the fleet is
 * durable, before the message is acknowledged), or `control_escape:PATH`, a
 * path (relative to the state root) every confined worker first tries to
 * write, which the runtime must refuse. Only tests start the CLI this way
 * (`fault` in `run_cli.ts`): `main.ts` reads no such variable.
 *
 * @module
 */

import { main } from "../../main.ts";
import { setTestEscape } from "../../commands/control/_confined.ts";
import { faultHookAt } from "../../lib/control/_fault_hook.ts";
import { installFaultHook } from "../../lib/control/_plane_context.ts";
import { setBridgeFault } from "../../lib/fleet/run_bridge.ts";

const ESCAPE = "control_escape:";
const BRIDGE = "fleet_request_written";

const fault = Deno.env.get("PROMPT_RUNNER_TEST_FAULT") ?? "";
if (fault.startsWith(ESCAPE)) setTestEscape(fault.slice(ESCAPE.length));
else if (fault === BRIDGE) setBridgeFault("request_written");
else {
  const hook = faultHookAt(fault);
  if (hook === undefined) {
    throw new Error(
      `Unknown PROMPT_RUNNER_TEST_FAULT ${JSON.stringify(fault)}`,
    );
  }
  installFaultHook(hook);
}

const code = await main(Deno.args);
// As main.ts ends a run.
if (Deno.args[0] === "run") Deno.exit(code);
Deno.exitCode = code;
