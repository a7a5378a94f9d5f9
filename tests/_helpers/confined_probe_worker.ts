/**
 * A worker for the confinement tests (`callConfined`): it tries what it is
 * told to (connect to a `host:port`, read a file, write one) and answers
 * how each went: `ok`, `NotCapable` (the runtime's refusal), or the error.
 *
 * @module
 */

import { serveCall } from "../../commands/control/_worker.ts";

/** What the probe is asked to try. */
export interface ProbeRequest {
  /** `host:port`s to connect to. */
  connect: string[];
  /** Files to read. */
  read: string[];
  /** Files to write. */
  write: string[];
}

async function outcome(attempt: () => Promise<unknown>): Promise<string> {
  try {
    await attempt();
    return "ok";
  } catch (error) {
    return error instanceof Deno.errors.NotCapable
      ? "NotCapable"
      : String(error);
  }
}

serveCall(async (request) => {
  const asked = request as ProbeRequest;
  const answers: Record<string, string> = {};
  for (const address of asked.connect) {
    const [hostname, port] = address.split(":");
    answers[`connect ${address}`] = await outcome(async () =>
      (await Deno.connect({ hostname: hostname!, port: Number(port) })).close()
    );
  }
  for (const path of asked.read) {
    answers[`read ${path}`] = await outcome(() => Deno.readTextFile(path));
  }
  for (const path of asked.write) {
    answers[`write ${path}`] = await outcome(() =>
      Deno.writeTextFile(path, "escaped\n")
    );
  }
  return answers;
});
