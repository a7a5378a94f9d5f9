import assert from "node:assert/strict";
import { sendRequest, waitChoice } from "../../commands/control/_wait.ts";
import {
  RunLostError,
  StateError,
  UsageError,
} from "../../lib/shared/errors.ts";

Deno.test("waitChoice() reads --wait and --timeout in seconds, and refuses a bad --timeout or one without --wait", () => {
  assert.equal(waitChoice({}), null);
  assert.deepEqual(waitChoice({ wait: true }), { timeoutMs: null });
  assert.deepEqual(waitChoice({ wait: true, timeout: "2.5" }), {
    timeoutMs: 2500,
  });
  for (const bad of ["0", "-1", "soon", "", "1e3"]) {
    assert.throws(
      () => waitChoice({ wait: true, timeout: bad }),
      (error: unknown) =>
        error instanceof UsageError && error.exitCode === 2 &&
        error.message.startsWith("--timeout must be a positive number"),
      bad,
    );
  }
  assert.throws(
    () => waitChoice({ timeout: "5" }),
    (error: unknown) =>
      error instanceof UsageError && /--timeout goes with --wait/.test(
        error.message,
      ),
  );
});

Deno.test("sendRequest() makes a run that ended while the request was written exit 5 with --wait, and leaves it exit 4 without", async () => {
  const ended = () =>
    Promise.reject(
      new StateError(
        "Run r1 ended (completed) before the request could be applied: the run ended (completed) before the request was applied",
        {
          code: "RUN_ENDED",
          hint:
            "Request x is recorded as rejected in 'prompt_runner control log'",
        },
      ),
    );
  await assert.rejects(
    sendRequest({ timeoutMs: null }, ended),
    (error: unknown) =>
      error instanceof RunLostError && error.exitCode === 5 &&
      /^Run r1 ended \(completed\)/.test(error.message) &&
      /recorded as rejected/.test(error.hint ?? ""),
  );
  await assert.rejects(
    sendRequest(null, ended),
    (error: unknown) => error instanceof StateError && error.exitCode === 4,
  );
  const notRunning = () =>
    Promise.reject(new StateError("Run r1 is completed, not running"));
  await assert.rejects(
    sendRequest({ timeoutMs: null }, notRunning),
    (error: unknown) => error instanceof StateError && error.exitCode === 4,
    "a run found ended before anything was written is refused, as always",
  );
  assert.equal(
    await sendRequest({ timeoutMs: 1000 }, () => Promise.resolve(7)),
    7,
  );
});
