import assert from "node:assert/strict";
import { join } from "node:path";
import type { ControlPlane } from "../../../lib/control/plane.ts";
import {
  type ControlRequest,
  MAX_REQUEST_BYTES,
} from "../../../lib/control/request.ts";
import { setView } from "../../../lib/control/set_view.ts";
import { currentRun, snapshot } from "../../../lib/control/current_run.ts";
import { MAX_STEER_BYTES, steer } from "../../../lib/control/steer.ts";
import {
  NotFoundError,
  StateError,
  UsageError,
} from "../../../lib/shared/errors.ts";
import { ID_PATTERN } from "../../../lib/shared/new_id.ts";
import { acquireRunLock, type RunLock } from "../../../lib/shared/run_lock.ts";
import {
  type ControlRoot,
  listNames,
  logEntriesOf,
  makeControlRoot,
  promptStart,
} from "../../_helpers/plane.ts";

const REQUEST_KEYS = [
  "author",
  "command",
  "id",
  "issued_at",
  "params",
  "run_id",
  "v",
];

/** A live run in-process: an open plane and the run lock, both released. */
async function withLiveRun(
  root: ControlRoot,
  runId: string,
  fn: (plane: ControlPlane) => Promise<void>,
): Promise<void> {
  const plane = await root.open(runId);
  let lock: RunLock | null = null;
  try {
    lock = await acquireRunLock(root.stateRoot, runId);
    await fn(plane);
  } finally {
    await lock?.release();
    await plane.close("completed");
  }
}

async function readRequest(
  root: ControlRoot,
  requestId: string,
): Promise<ControlRequest> {
  return JSON.parse(
    await Deno.readTextFile(join(root.paths.requests, `${requestId}.json`)),
  ) as ControlRequest;
}

function isError<T extends Error>(
  type: new (...args: never[]) => T,
  check: (error: T) => void = () => {},
): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof type, String(error));
    check(error);
    return true;
  };
}

// --- setView ----------------------------------------------------------------

Deno.test("setView() writes a durable set_view request with the fields of ControlRequest and no temp file left behind", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async (plane) => {
    const receipt = await setView(root.ref("run-a"), {
      tool_output: "full",
      diff: "none",
    }, { author: "  alice  " });
    assert.equal(receipt.run_id, "run-a");
    assert.match(receipt.request_id, ID_PATTERN);
    assert.deepEqual(await listNames(root.paths.requests), [
      `${receipt.request_id}.json`,
    ]);
    const request = await readRequest(root, receipt.request_id);
    assert.deepEqual(Object.keys(request).sort(), REQUEST_KEYS);
    assert.equal(request.v, 1);
    assert.equal(request.id, receipt.request_id);
    assert.equal(request.command, "set_view");
    assert.deepEqual(request.params, { tool_output: "full", diff: "none" });
    assert.equal(request.run_id, "run-a");
    assert.equal(request.author, "alice");
    assert.ok(!Number.isNaN(Date.parse(request.issued_at)));

    // The runner applies it at its next boundary.
    assert.deepEqual(await plane.boundary({ idle: true }), [{
      command: "set_view",
      view: { tool_output: "full", diff: "none" },
      request_id: receipt.request_id,
      author: "alice",
    }]);
  });
});

Deno.test("setView() refuses a bad value with a UsageError naming the allowed values, writing nothing", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async () => {
    await assert.rejects(
      setView(root.ref("run-a"), { tool_output: "everything" }),
      isError(UsageError, (error) => {
        assert.equal(error.exitCode, 2);
        assert.match(
          error.message,
          /"everything": expected one of none, summary, preview, full/,
        );
      }),
    );
    await assert.rejects(
      setView(root.ref("run-a"), { colour: "red" }),
      isError(UsageError, (error) => assert.match(error.message, /"colour"/)),
    );
    await assert.rejects(setView(root.ref("run-a"), {}), UsageError);
    assert.deepEqual(await listNames(root.paths.requests), []);
  });
});

Deno.test("setView() validates before it looks for the run", async () => {
  await using root = await makeControlRoot();
  await assert.rejects(
    setView(root.ref("run-a"), { thinking: "maybe" }),
    UsageError,
  );
});

Deno.test("setView() refuses a run that is not running with a StateError (exit code 4) naming its status", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.close("failed");
  await assert.rejects(
    setView(root.ref("run-a"), { diff: "full" }),
    isError(StateError, (error) => {
      assert.equal(error.exitCode, 4);
      assert.match(error.message, /run-a is failed, not running/);
    }),
  );
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("setView() refuses an interrupted run with a hint that continues it with --resume", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.close("interrupted");
  await assert.rejects(
    setView(root.ref("run-a"), { diff: "full" }),
    isError(StateError, (error) => {
      assert.equal(error.exitCode, 4);
      assert.match(error.message, /run-a is interrupted, not running/);
      assert.match(error.hint ?? "", /'prompt_runner run PACKET --resume'/);
    }),
  );
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("setView() refuses a running snapshot whose runner holds no lock, saying it is gone", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await assert.rejects(
    setView(root.ref("run-a"), { diff: "full" }),
    isError(StateError, (error) => {
      assert.equal(error.exitCode, 4);
      assert.match(error.message, /gone/);
    }),
  );
  assert.deepEqual(await listNames(root.paths.requests), []);
  await plane.close("completed");
});

Deno.test("setView() refuses a run whose state root is locked by another run", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const lock = await acquireRunLock(root.stateRoot, "run-other");
  try {
    await assert.rejects(
      setView(root.ref("run-a"), { diff: "full" }),
      StateError,
    );
  } finally {
    await lock.release();
    await plane.close("completed");
  }
});

Deno.test("setView() refuses a stale ref once another run took the state root", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-b", async () => {
    await assert.rejects(
      setView(root.ref("run-a"), { diff: "full" }),
      isError(StateError, (error) => {
        assert.equal(error.code, "STALE_RUN");
        assert.match(error.message, /run-b replaced it/);
      }),
    );
  });
});

// --- steer ----------------------------------------------------------------

Deno.test("steer() writes the trimmed text and no prompt_id when none is named", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async () => {
    const { request_id } = await steer(
      root.ref("run-a"),
      "  \n keep the public API stable \t",
      { author: "bob" },
    );
    const request = await readRequest(root, request_id);
    assert.deepEqual(Object.keys(request).sort(), REQUEST_KEYS);
    assert.equal(request.command, "steer");
    assert.deepEqual(request.params, { text: "keep the public API stable" });
    assert.equal(request.author, "bob");
    assert.deepEqual(await listNames(root.paths.requests), [
      `${request_id}.json`,
    ]);
  });
});

const PROMPT_IDS: [string, string][] = [
  ["1", "01"],
  ["01", "01"],
  ["007", "07"],
  [" 12 ", "12"],
];

for (const [given, expected] of PROMPT_IDS) {
  Deno.test(`steer() normalises --prompt ${JSON.stringify(given)} to "${expected}"`, async () => {
    await using root = await makeControlRoot();
    await withLiveRun(root, "run-a", async () => {
      const { request_id } = await steer(root.ref("run-a"), "go", {
        promptId: given,
      });
      const request = await readRequest(root, request_id);
      assert.deepEqual(
        Object.keys(request).sort(),
        [
          ...REQUEST_KEYS,
          "prompt_id",
        ].sort(),
      );
      assert.equal(request.prompt_id, expected);
    });
  });
}

Deno.test("steer() for prompt 1 reaches prompt 01 when it runs", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async (plane) => {
    await plane.promptStarted(promptStart("01"));
    const { request_id } = await steer(root.ref("run-a"), "go", {
      promptId: "1",
    });
    const commands = await plane.boundary({ idle: false });
    assert.deepEqual(commands.map((c) => c.request_id), [request_id]);
    assert.deepEqual(
      (await logEntriesOf(root.paths, request_id)).map((e) => e.outcome),
      ["accepted"],
    );
  });
});

Deno.test("steer() refuses empty text with a UsageError, writing nothing", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async () => {
    for (const text of ["", "   ", "\n\t"]) {
      await assert.rejects(
        steer(root.ref("run-a"), text),
        isError(UsageError, (error) => assert.equal(error.exitCode, 2)),
      );
    }
    assert.deepEqual(await listNames(root.paths.requests), []);
  });
});

Deno.test("steer() refuses a text over MAX_STEER_BYTES with a UsageError naming the limit before it looks at the run", async () => {
  await using root = await makeControlRoot();
  // No run at all: a size error comes first all the same.
  for (const text of ["x".repeat(MAX_STEER_BYTES + 1), '"'.repeat(40_000)]) {
    await assert.rejects(
      steer(root.ref("run-a"), text),
      isError(UsageError, (error) => {
        assert.equal(error.code, "STEER_TOO_LARGE");
        assert.match(error.message, /the limit is 61440 bytes$/);
      }),
    );
  }
  assert.equal(MAX_STEER_BYTES + 4096, MAX_REQUEST_BYTES);
  assert.deepEqual(await listNames(root.paths.requests), []);
});

Deno.test("steer() refuses a prompt id that is not digits with a UsageError, writing nothing", async () => {
  await using root = await makeControlRoot();
  await withLiveRun(root, "run-a", async () => {
    for (const promptId of ["a1", "", "1.5", "-1"]) {
      await assert.rejects(
        steer(root.ref("run-a"), "go", { promptId }),
        UsageError,
      );
    }
    assert.deepEqual(await listNames(root.paths.requests), []);
  });
});

Deno.test("steer() refuses a run that is not running with a StateError naming its status", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.close("interrupted");
  await assert.rejects(
    steer(root.ref("run-a"), "go"),
    isError(StateError, (error) => {
      assert.equal(error.exitCode, 4);
      assert.match(error.message, /interrupted/);
    }),
  );
  assert.deepEqual(await listNames(root.paths.requests), []);
});

// --- currentRun and snapshot -------------------------------------------------

Deno.test("currentRun() fails with NotFoundError where no run was recorded", async () => {
  await using root = await makeControlRoot();
  await assert.rejects(
    currentRun(root.stateRoot),
    isError(NotFoundError, (error) => {
      assert.equal(error.exitCode, 3);
      assert.match(error.message, /No run recorded/);
    }),
  );
  await assert.rejects(snapshot(root.ref("run-a")), NotFoundError);
});

Deno.test("currentRun() names the newest run, running or finished", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  assert.deepEqual(await currentRun(root.stateRoot), root.ref("run-a"));
  await a.close("completed");
  assert.deepEqual(await currentRun(root.stateRoot), root.ref("run-a"));
  const b = await root.open("run-b");
  assert.deepEqual(await currentRun(root.stateRoot), root.ref("run-b"));
  await b.close("failed");
  assert.deepEqual(await currentRun(root.stateRoot), root.ref("run-b"));
});

Deno.test("snapshot() reads the run's snapshot as the plane wrote it", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  await plane.promptStarted(promptStart("02", { attempt: 3, mode: "repair" }));
  const snap = await snapshot(root.ref("run-a"));
  assert.equal(snap.run_id, "run-a");
  assert.equal(snap.status, "running");
  assert.equal(snap.prompt_id, "02");
  assert.equal(snap.attempt, 3);
  assert.equal(snap.mode, "repair");
  await plane.close("blocked");
  assert.equal((await snapshot(root.ref("run-a"))).status, "blocked");
});

Deno.test("snapshot() of a run another run replaced fails with a StateError", async () => {
  await using root = await makeControlRoot();
  const a = await root.open("run-a");
  await a.close("completed");
  const b = await root.open("run-b");
  await assert.rejects(
    snapshot(root.ref("run-a")),
    isError(StateError, (error) => {
      assert.equal(error.code, "STALE_RUN");
      assert.equal(error.exitCode, 4);
    }),
  );
  await b.close("completed");
});

Deno.test("snapshot() of a corrupt snapshot file fails with a StateError naming the file", async () => {
  await using root = await makeControlRoot();
  await Deno.mkdir(root.paths.dir, { recursive: true });
  await Deno.writeTextFile(root.paths.snapshot, '{"run_id": "run-a", ');
  await assert.rejects(
    snapshot(root.ref("run-a")),
    isError(StateError, (error) => {
      assert.equal(error.code, "SNAPSHOT_CORRUPT");
      assert.ok(error.message.includes(root.paths.snapshot));
    }),
  );
});
