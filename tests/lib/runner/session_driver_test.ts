import assert from "node:assert/strict";
import { loadPacket } from "../../../lib/packet/mod.ts";
import type {
  Provider,
  ResumeRequest,
  Session,
  SessionRequest,
} from "../../../lib/providers/provider.ts";
import { RunContext } from "../../../lib/runner/_run_context.ts";
import { type PlannedPrompt, planRun } from "../../../lib/runner/plan_run.ts";
import { driveSession } from "../../../lib/runner/session_driver.ts";
import type {
  ProviderEvent,
  RunEvent,
  SteerResult,
} from "../../../lib/shared/mod.ts";
import type { BoundaryCommand } from "../../../lib/shared/run_hooks.ts";
import { DEFAULT_VIEW } from "../../../lib/shared/view.ts";
import { makePacket, promptFile } from "../../_helpers/temp_packet.ts";

/** A provider whose sessions play `script`, stopping early when interrupted. */
function fakeProvider(
  script: (request: SessionRequest | ResumeRequest) => ProviderEvent[],
  options: { throwAfter?: number } = {},
): Provider & { requests: (SessionRequest | ResumeRequest)[]; closes: number } {
  const provider = {
    name: "fake",
    defaultModel: "fake",
    requests: [] as (SessionRequest | ResumeRequest)[],
    closes: 0,
    start: (request: SessionRequest) => Promise.resolve(session(request)),
    resume: (_meta: unknown, request: ResumeRequest) =>
      Promise.resolve(session(request)),
  };
  function session(request: SessionRequest | ResumeRequest): Session {
    provider.requests.push(request);
    let interrupted = false;
    const events = script(request);
    return {
      meta: { provider: "fake", session_id: "thread-1", model: "fake" },
      acceptsInputAfterStart: false,
      events: (async function* (): AsyncGenerator<ProviderEvent> {
        let played = 0;
        for (const event of events) {
          if (interrupted) return;
          if (options.throwAfter === played) throw new Error("pipe broke");
          played++;
          yield event;
        }
      })(),
      interrupt(): void {
        interrupted = true;
      },
      send: () => Promise.reject(new Error("no input")),
      close(): Promise<void> {
        provider.closes++;
        return Promise.resolve();
      },
    };
  }
  return provider;
}

const message = (content: string): ProviderEvent => ({
  type: "message_received",
  data: { role: "assistant", content },
});

async function setUp(
  provider: Provider,
  boundary: (last: RunEvent | null) => BoundaryCommand[] = () => [],
): Promise<{
  ctx: RunContext;
  planned: PlannedPrompt;
  events: RunEvent[];
  settled: SteerResult[];
  dispose: () => Promise<void>;
}> {
  const packet = await makePacket({
    git: false,
    prompts: { "01_x.prompt.md": promptFile("name: x") },
  });
  const loaded = await loadPacket(packet.dir);
  const [planned] = await planRun(loaded, {});
  const events: RunEvent[] = [];
  const settled: SteerResult[] = [];
  const ctx = new RunContext(loaded, {}, DEFAULT_VIEW, {
    runId: "20261130T000000000Z-aaaaaaaaaa",
    stateRoot: null,
    hooks: {
      observe: (event) => {
        events.push(event);
        return Promise.resolve();
      },
      boundary: () => Promise.resolve(boundary(events.at(-1) ?? null)),
      steerSettled: (result) => {
        settled.push(result);
        return Promise.resolve();
      },
    },
  });
  return {
    ctx,
    planned: { ...planned!, provider },
    events,
    settled,
    dispose: async () => await packet[Symbol.asyncDispose](),
  };
}

const SLOT = { attempt: 1, ordinal: 1, mode: "run" as const, text: "Do it." };

Deno.test("driveSession() on the interrupt lane stops the turn at the steer, resumes the same thread with the steer and a carry-on instruction, and reports it delivered at the resumed session's first event", async () => {
  const provider = fakeProvider((request) =>
    "cause" in request
      ? [
        message("resumed"),
        { type: "run_completed", data: {} } as ProviderEvent,
      ]
      : [
        message("one"),
        message("two"),
        { type: "run_completed", data: {} } as ProviderEvent,
      ]
  );
  let handed = false;
  const { ctx, planned, events, settled, dispose } = await setUp(
    provider,
    (last) => {
      if (handed || last?.data.content !== "one") return [];
      handed = true;
      return [{
        command: "steer",
        text: "use tabs",
        prompt_id: "01",
        request_id: "r1",
        author: "ada",
      }];
    },
  );
  try {
    ctx.inFlight = { prompt: "01", attempt: 1 }; // as the attempt loop sets it
    const outcome = await driveSession(ctx, planned, SLOT);
    assert.deepEqual(outcome, {
      failure: null,
      interrupted: false,
      resumes: 0,
      usage: { input_tokens: 0, output_tokens: 0, cost_usd: null },
    });
    // The resumed session's first event is its acknowledgement of the steer.
    assert.deepEqual(events.map((e) => e.data.content ?? e.type), [
      "one",
      "resumed",
      "prompt_steered",
      "run_completed",
    ]);
    const resume = provider.requests[1] as ResumeRequest;
    assert.equal(resume.cause, "steer");
    assert.equal(resume.steer, "use tabs");
    assert.match(resume.text, /^use tabs\n\n\(This is a steer/);
    assert.deepEqual(
      settled.map((s) => [s.delivered, s.delivery, s.mechanism, s.attempt]),
      [[true, "interrupt_and_resume", "resume", 1]],
    );
    assert.equal(provider.closes >= 2, true, "each session closed");
    assert.equal(ctx.session, null);
  } finally {
    await dispose();
  }
});

Deno.test("driveSession() turns a stream that throws into a provider failure and closes the session", async () => {
  const provider = fakeProvider(
    () => [message("one"), message("two")],
    { throwAfter: 1 },
  );
  const { ctx, planned, events, dispose } = await setUp(provider);
  try {
    const outcome = await driveSession(ctx, planned, SLOT);
    assert.equal(outcome.interrupted, false);
    assert.match(
      outcome.failure?.message ?? "",
      /the fake stream failed: pipe broke/,
    );
    assert.deepEqual(events.map((e) => e.data.content), ["one"]);
    assert.ok(provider.closes >= 1);
  } finally {
    await dispose();
  }
});

Deno.test("driveSession() reports a provider that cannot start as start_failed, with an error_occurred event", async () => {
  const provider = fakeProvider(() => []);
  provider.start = () => Promise.reject(new Error("no such binary"));
  const { ctx, planned, events, dispose } = await setUp(provider);
  try {
    const outcome = await driveSession(ctx, planned, SLOT);
    assert.equal(outcome.failure?.failure_class, "start_failed");
    assert.equal(outcome.failure?.retryable, false);
    assert.equal(events[0]?.type, "error_occurred");
    assert.match(String(events[0]?.data.error_message), /no such binary/);
  } finally {
    await dispose();
  }
});

Deno.test("driveSession() gives the hooks an idle boundary while a quiet provider keeps the next event back, and stops watching after", async () => {
  const quiet = Promise.withResolvers<void>();
  const provider = fakeProvider(() => [message("one")]);
  const start = provider.start;
  provider.start = async (request) => {
    const session = await start(request);
    const events = session.events;
    return {
      ...session,
      events: (async function* (): AsyncGenerator<ProviderEvent> {
        await quiet.promise; // silent until the idle boundary came
        yield* events;
      })(),
    };
  };
  const idles: number[] = [];
  const packet = await makePacket({
    git: false,
    prompts: { "01_x.prompt.md": promptFile("name: x") },
  });
  try {
    const loaded = await loadPacket(packet.dir);
    const [planned] = await planRun(loaded, {});
    const seen: RunEvent[] = [];
    const ctx = new RunContext(loaded, {}, DEFAULT_VIEW, {
      runId: "20261130T000000000Z-aaaaaaaaaa",
      stateRoot: null,
      hooks: {
        observe: (event) => {
          seen.push(event);
          return Promise.resolve();
        },
        boundary: ({ idle }) => {
          if (idle) {
            idles.push(seen.length);
            quiet.resolve();
          }
          return Promise.resolve([]);
        },
      },
    });
    const outcome = await driveSession(ctx, { ...planned!, provider }, SLOT);
    assert.equal(outcome.failure, null);
    assert.equal(idles[0], 0, "the idle boundary came before any event");
    assert.deepEqual(seen.map((e) => e.data.content), ["one"]);
  } finally {
    await packet[Symbol.asyncDispose]();
  }
});

Deno.test("driveSession() hands a provider a session request with no simulate script in it", async () => {
  const provider = fakeProvider(
    () => [{ type: "run_completed", data: { stop_reason: "end_turn" } }],
  );
  const { ctx, planned, dispose } = await setUp(provider);
  try {
    ctx.inFlight = { prompt: "01", attempt: 1 };
    await driveSession(ctx, planned, SLOT);
    assert.equal(provider.requests.length, 1);
    assert.equal("script" in provider.requests[0]!, false);
  } finally {
    await dispose();
  }
});
