import assert from "node:assert/strict";
import { currentRun, snapshot } from "../../../lib/control/current_run.ts";
import { events } from "../../../lib/control/events.ts";
import { fileTransport } from "../../../lib/control/file_transport.ts";
import type { ControlPlane } from "../../../lib/control/plane.ts";
import { setView } from "../../../lib/control/set_view.ts";
import type { AmendTarget } from "../../../lib/contract/contract_transport.ts";
import { UsageError } from "../../../lib/shared/errors.ts";
import { acquireRunLock, type RunLock } from "../../../lib/shared/run_lock.ts";
import {
  clientContractTests,
  type ClientHarness,
} from "../../_helpers/client_contract.ts";
import { MemoryTransport } from "../../_helpers/memory_transport.ts";
import {
  makePacket,
  promptFile,
  type TempPacket,
} from "../../_helpers/temp_packet.ts";
import {
  makeControlRoot,
  promptStart,
  testSnapshot,
} from "../../_helpers/plane.ts";

/** The file transport, its runner an in-process plane holding the run lock. */
async function fileHarness(): Promise<ClientHarness> {
  const root = await makeControlRoot();
  const runs = new Map<string, { plane: ControlPlane; lock: RunLock }>();
  const packets: TempPacket[] = [];
  const runOf = (runId: string) => {
    const run = runs.get(runId);
    if (run === undefined) throw new Error(`run ${runId} is not open`);
    return run;
  };
  return {
    address: root.stateRoot,
    transport: undefined,
    ref: (runId) => root.ref(runId),
    async open(runId): Promise<void> {
      const plane = await root.open(runId);
      const lock = await acquireRunLock(root.stateRoot, runId);
      runs.set(runId, { plane, lock });
      await plane.promptStarted(promptStart());
    },
    observe: (event): Promise<void> => runOf(event.run_id).plane.observe(event),
    async boundary(runId): Promise<void> {
      await runOf(runId).plane.boundary({ idle: true });
    },
    async close(runId, status): Promise<void> {
      const { plane, lock } = runOf(runId);
      await plane.close(status);
      await lock.release();
      runs.delete(runId);
    },
    async die(runId): Promise<void> {
      // As after a SIGKILL: the plane stops where it is, and run.lock keeps
      // its record while no process holds its kernel lock any more.
      const { plane, lock } = runOf(runId);
      await plane.abandon();
      const record = await Deno.readTextFile(root.paths.lock);
      await lock.release();
      await Deno.writeTextFile(root.paths.lock, record);
      runs.delete(runId);
    },
    async contractTarget(): Promise<AmendTarget> {
      const packet = await makePacket({
        git: false,
        prompts: {
          "01_notes.prompt.md": promptFile("verify: {files_exist: [NOTES.md]}"),
        },
      });
      packets.push(packet);
      return { packet_dir: packet.dir, state_root: root.stateRoot };
    },
    async [Symbol.asyncDispose](): Promise<void> {
      for (const packet of packets) await packet[Symbol.asyncDispose]();
      for (const { lock } of runs.values()) await lock.release();
      await root[Symbol.asyncDispose]();
    },
  };
}

/** The in-memory transport, its runner the test itself. */
function memoryHarness(
  makeTransport: () => MemoryTransport = () => new MemoryTransport(),
): () => Promise<ClientHarness> {
  return () => {
    const transport = makeTransport();
    const address = "mem:root";
    return Promise.resolve({
      address,
      transport,
      ref: (runId) => ({ state_root: address, run_id: runId, transport }),
      open(runId): Promise<void> {
        transport.open(address, testSnapshot(address, { run_id: runId }));
        return Promise.resolve();
      },
      observe(event): Promise<void> {
        transport.observe(address, event);
        return Promise.resolve();
      },
      boundary(runId): Promise<void> {
        transport.decide(address, runId);
        return Promise.resolve();
      },
      close(runId, status): Promise<void> {
        transport.close(address, runId, status);
        return Promise.resolve();
      },
      die(runId): Promise<void> {
        transport.die(address, runId);
        return Promise.resolve();
      },
      contractTarget(): Promise<AmendTarget> {
        transport.prompt(address, "01", { files_exist: ["NOTES.md"] });
        return Promise.resolve({ transport, state_root: address });
      },
      [Symbol.asyncDispose]: () => Promise.resolve(),
    });
  };
}

clientContractTests("file", fileHarness);
clientContractTests("memory", memoryHarness());

Deno.test("a plain { state_root, run_id } is a file RunRef: the file transport reads it as the client calls do", async () => {
  await using root = await makeControlRoot();
  const plane = await root.open("run-a");
  const ref = { state_root: root.stateRoot, run_id: "run-a" };
  assert.deepEqual(
    await fileTransport.readSnapshot(root.stateRoot),
    await snapshot(ref),
  );
  assert.deepEqual(await currentRun(root.stateRoot), ref);
  await plane.close("completed");
});

Deno.test("a RunRef naming something that is not a transport is refused with a UsageError naming what it lacks", async () => {
  const ref = {
    state_root: "mem:root",
    run_id: "run-a",
    transport: { name: "bogus" },
  };
  await assert.rejects(snapshot(ref), (error) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, /transport "bogus" lacks readSnapshot/);
    return true;
  });
  await assert.rejects(setView(ref, { thinking: "hide" }), UsageError);
  await assert.rejects(events(ref).next(), UsageError);
});

Deno.test("a client call over one transport never reaches another: a memory run is not seen through files", async () => {
  await using root = await makeControlRoot();
  const memory = new MemoryTransport();
  memory.open(root.stateRoot, testSnapshot(root.stateRoot, { run_id: "m" }));
  const ref = await currentRun(root.stateRoot, { transport: memory });
  assert.equal(ref.run_id, "m");
  assert.equal((await snapshot(ref)).status, "running");
  // The same address through its files holds no run at all.
  await assert.rejects(currentRun(root.stateRoot), /No run recorded/);
});

Deno.test("the client API follows a run with one function, events: subscribe is gone from mod.ts", async () => {
  const api: Record<string, unknown> = await import("../../../mod.ts");
  assert.equal(typeof api.events, "function");
  assert.equal("subscribe" in api, false);
  assert.equal(typeof api.fileTransport, "object");
  assert.equal((api.fileTransport as { name: string }).name, "file");
});
