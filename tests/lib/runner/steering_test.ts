import assert from "node:assert/strict";
import { runPacket } from "../../../lib/runner/mod.ts";
import { readState } from "../../../lib/status/mod.ts";
import type {
  BoundaryCommand,
  RunEvent,
  RunHooks,
  SteerResult,
} from "../../../lib/shared/mod.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

/** Hooks that hand out one steer when `when` first holds, and record what happens. */
function steeringHooks(
  text: string,
  when: (context: { idle: boolean; events: RunEvent[] }) => boolean,
): RunHooks & { settled: SteerResult[]; events: RunEvent[] } {
  const events: RunEvent[] = [];
  const settled: SteerResult[] = [];
  let sent = false;
  return {
    events,
    settled,
    observe(event: RunEvent): Promise<void> {
      events.push(event);
      return Promise.resolve();
    },
    boundary(context: { idle: boolean }): Promise<BoundaryCommand[]> {
      if (sent || !when({ ...context, events })) return Promise.resolve([]);
      sent = true;
      const prompt = events.findLast((e) => e.type === "prompt_started")!;
      return Promise.resolve([{
        command: "steer",
        text,
        prompt_id: prompt.prompt_id!,
        request_id: "req-1",
        author: "ada",
      }]);
    },
    steerSettled(result: SteerResult): Promise<void> {
      settled.push(result);
      return Promise.resolve();
    },
  };
}

Deno.test("a steer consumed while no turn is active waits for the prompt's next turn", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify:
  commands: [{exec: sleep, args: ["1.5"]}]
  contains: [{path: NOTES.md, text: done}]
simulate:
  attempts:
    - writes: [{path: NOTES.md, text: draft}]
    - delay_ms: 20
      messages: ["fixing the notes now"]
      writes: [{path: NOTES.md, text: done}]`),
    },
  });
  // The first idle boundary falls in the first verification (sleep 1.5 s).
  const hooks = steeringHooks("use the template", ({ idle }) => idle);
  const result = await runPacket(packet.dir, { hooks, stateRoot: null });
  assert.equal(result.status, "completed");
  assert.deepEqual(result.prompts["01"]?.attempts, ["run", "repair"]);
  assert.equal(hooks.settled.length, 1);
  assert.equal(hooks.settled[0]?.delivered, true);
  assert.equal(hooks.settled[0]?.attempt, 2, "delivered in the repair's turn");
  assert.equal(hooks.settled[0]?.provider, "simulated");
  const steered = hooks.events.find((e) => e.type === "prompt_steered");
  assert.equal(steered?.attempt, 2);
});

Deno.test("a steer still waiting when its prompt finishes is refused with a reason", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify:
  commands: [{exec: sleep, args: ["1.5"]}]
simulate:
  attempts: [{writes: [{path: NOTES.md, text: done}]}]`),
    },
  });
  const hooks = steeringHooks("too late", ({ idle }) => idle);
  const result = await runPacket(packet.dir, { hooks, stateRoot: null });
  assert.equal(result.status, "completed");
  assert.equal(hooks.settled.length, 1);
  assert.equal(hooks.settled[0]?.delivered, false);
  assert.match(
    hooks.settled[0]!.reason!,
    /prompt 01 finished \(completed\) before the steer could be delivered/,
  );
  assert.equal(hooks.events.some((e) => e.type === "prompt_steered"), false);
});

Deno.test("a steer is never evidence: dictating the contract's text does not satisfy it", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`verify:
  contains: [{path: NOTES.md, text: "the answer is 42"}]
recovery: {repair: {enabled: false}}
simulate:
  attempts:
    - delay_ms: 20
      repeat: 5
      messages: ["thinking about the notes"]`),
    },
  });
  const hooks = steeringHooks(
    'Write "the answer is 42" into NOTES.md',
    ({ events }) => events.some((e) => e.type === "message_received"),
  );
  const result = await runPacket(packet.dir, { hooks });
  assert.equal(result.prompts["01"]?.status, "verification_failed");
  assert.equal(hooks.settled[0]?.delivered, true);
  assert.ok(hooks.events.some((e) =>
    e.type === "message_received" &&
    String(e.data.content).includes("the answer is 42")
  ));
  const state = await readState(packet.stateRoot);
  assert.equal(state.prompts["01"]?.steered, true);
  assert.equal(state.prompts["01"]?.steer_count, 1);
  assert.deepEqual(state.prompts["01"]?.attempts.map((a) => a.mode), ["run"]);
});

Deno.test("a set_view command at a boundary reaches viewChanged and the next events render under it", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_notes.prompt.md": promptFile(`simulate:
  attempts:
    - thinking: ["first thought", "second thought", "third thought"]`),
    },
  });
  const views: string[] = [];
  let sent = false;
  const chunks: string[] = [];
  const result = await runPacket(packet.dir, {
    stateRoot: null,
    output: {
      write(text: string): Promise<void> {
        chunks.push(text);
        return Promise.resolve();
      },
    },
    hooks: {
      boundary(): Promise<BoundaryCommand[]> {
        const seen = chunks.join("");
        if (sent || !seen.includes("first thought")) return Promise.resolve([]);
        sent = true;
        return Promise.resolve([{
          command: "set_view",
          view: { thinking: "hide" },
          request_id: "r",
          author: "ada",
        }]);
      },
      viewChanged(view): Promise<void> {
        views.push(view.thinking);
        return Promise.resolve();
      },
    },
  });
  assert.equal(result.status, "completed");
  assert.deepEqual(views, ["hide"]);
  const text = chunks.join("");
  assert.match(text, /first thought/);
  assert.doesNotMatch(text, /second thought|third thought/);
});
