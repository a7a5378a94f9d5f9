import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { ExitCode } from "../../../lib/shared/errors.ts";
import { LineReader, readAll } from "../../_helpers/lines.ts";
import {
  stopExitCode,
  type StopSignal,
} from "../../../lib/shared/stop_signals.ts";

const SIGNALS: readonly StopSignal[] = ["SIGHUP", "SIGINT", "SIGTERM"];
const MODULE = fileURLToPath(
  new URL("../../../lib/shared/stop_signals.ts", import.meta.url),
);

Deno.test("stopExitCode: 129, 130 and 143, the ExitCode entries for SIGHUP, SIGINT and SIGTERM", () => {
  assert.deepEqual(SIGNALS.map(stopExitCode), [129, 130, 143]);
  assert.deepEqual(
    SIGNALS.map((signal) => ExitCode[signal]),
    [129, 130, 143],
  );
});

for (const signal of SIGNALS) {
  Deno.test(`stopExitCode(${signal}) is the code a process killed by ${signal} exits with`, async () => {
    const child = new Deno.Command("sleep", {
      args: ["60"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    child.kill(signal);
    const status = await child.status;
    assert.equal(status.signal, signal);
    assert.equal(status.code, stopExitCode(signal));
  });

  Deno.test(`onStopSignals: a process that listens exits with ${signal}'s code, named by the listener`, async () => {
    const script = `
      import { onStopSignals } from ${JSON.stringify(MODULE)};
      const remove = onStopSignals(
        ["SIGHUP", "SIGINT", "SIGTERM"],
        (signal, exitCode) => {
          remove();
          console.log(signal);
          Deno.exit(exitCode);
        },
      );
      console.log("listening");
      setTimeout(() => {}, 60_000);
    `;
    const child = new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-config", script],
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const lines = new LineReader(child.stdout);
    const stderr = readAll(child.stderr);
    assert.equal(await lines.next(), "listening");
    child.kill(signal);
    assert.deepEqual(await lines.rest(), [signal], await stderr);
    const status = await child.status;
    assert.equal(status.signal, null);
    assert.equal(status.code, stopExitCode(signal), await stderr);
  });
}
