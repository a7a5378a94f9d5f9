import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_AGENT_OPTIONS } from "../../../lib/packet/agent_options.ts";
import { getProvider } from "../../../lib/providers/get_provider.ts";
import {
  createSimulatedProvider,
  isSimulatedProvider,
  type SimulatedRequest,
} from "../../../lib/providers/simulated.ts";
import { parseSimulatedScript } from "../../../lib/providers/simulated_script.ts";
import type { Session } from "../../../lib/providers/provider.ts";
import type { ProviderEvent } from "../../../lib/shared/mod.ts";
import { withTempDir } from "../../_helpers/temp_dir.ts";

function request(
  dir: string,
  script: unknown,
  overrides: Partial<SimulatedRequest> = {},
): SimulatedRequest {
  const attempt = overrides.attempt ?? 1;
  return {
    prompt_id: "01",
    attempt,
    ordinal: attempt,
    mode: "run",
    text: "Do it.",
    cwd: dir,
    repos: { app: dir },
    model: null,
    agent: DEFAULT_AGENT_OPTIONS,
    max_steers: 3,
    tmpdir: null,
    script,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function drain(session: Session): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of session.events) events.push(event);
  return events;
}

Deno.test("simulated start() plays thinking, messages, tools, usage and run_completed in order", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      attempts: [{
        thinking: ["think first"],
        messages: ["one two three four five"],
        tools: [
          { name: "Edit", input: { file_path: "a.md" }, output: "ok" },
          {
            name: "Bash",
            input: { command: "false" },
            output: "boom",
            error: true,
          },
        ],
        usage: { input_tokens: 12, output_tokens: 3 },
      }],
    }));
    const events = await drain(session);
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "message_streamed",
      "message_streamed",
      "message_streamed",
      "message_received",
      "tool_call_started",
      "tool_call_completed",
      "tool_call_started",
      "tool_call_failed",
      "token_usage_updated",
      "run_completed",
    ]);
    assert.equal(events[1]?.data.kind, "thinking");
    assert.equal(events[2]?.data.kind, "text");
    assert.equal(
      `${events[2]?.data.delta}${events[3]?.data.delta}`,
      "one two three four five",
    );
    assert.equal(events[4]?.data.content, "one two three four five");
    assert.equal(events[6]?.data.tool_call_id, events[5]?.data.tool_call_id);
    assert.equal(events[6]?.data.tool_name, "Edit");
    assert.equal(events[8]?.data.is_error, true);
    assert.deepEqual(events[9]?.data, {
      input_tokens: 12,
      output_tokens: 3,
      total_tokens: 15,
    });
    await session.close();
  });
});

Deno.test("simulated start() reports a step's cost_usd with its usage, a running total per round", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      attempts: [{
        repeat: 3,
        usage: { input_tokens: 10, output_tokens: 2, cost_usd: 0.012 },
      }],
    }));
    const usage = (await drain(session)).filter((e) =>
      e.type === "token_usage_updated"
    ).map((e) => e.data);
    assert.deepEqual(usage, [
      { input_tokens: 10, output_tokens: 2, total_tokens: 12, cost_usd: 0.012 },
      { input_tokens: 20, output_tokens: 4, total_tokens: 24, cost_usd: 0.024 },
      { input_tokens: 30, output_tokens: 6, total_tokens: 36, cost_usd: 0.036 },
    ]);
    await session.close();
  });
  assert.throws(
    () =>
      parseSimulatedScript({ attempts: [{ usage: { cost_usd: "cheap" } }] }),
    /simulate\.attempts\[0\]\.usage\.cost_usd must be a number >= 0/,
  );
});

Deno.test("simulated start() applies writes before the first event", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(join(dir, "other"));
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      attempts: [{
        writes: [
          { path: "deep/a.md", text: "hello" },
          { path: "deep/a.md", text: " again", append: true },
          { path: "b.md", text: "other repo", repo: "other" },
        ],
      }],
    }, { repos: { app: dir, other: join(dir, "other") } }));
    assert.equal(
      await Deno.readTextFile(join(dir, "deep/a.md")),
      "hello again",
    );
    assert.equal(
      await Deno.readTextFile(join(dir, "other/b.md")),
      "other repo",
    );
    await drain(session);
  });
});

Deno.test("simulated start() uses the step of its attempt and an empty success past the script", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const script = {
      attempts: [{ messages: ["first"] }, { messages: ["second"] }],
    };
    const second = await drain(
      await provider.start(request(dir, script, { attempt: 2 })),
    );
    assert.equal(
      second.find((e) => e.type === "message_received")?.data.content,
      "second",
    );
    const third = await drain(
      await provider.start(request(dir, script, { attempt: 3 })),
    );
    assert.deepEqual(third.map((e) => e.type), [
      "run_started",
      "run_completed",
    ]);
  });
});

Deno.test("simulated start() ends a failing step with error_occurred and run_failed", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const events = await drain(
      await provider.start(request(dir, {
        attempts: [{ error: { kind: "rate_limit", message: "slow down" } }],
      })),
    );
    assert.deepEqual(events.map((e) => e.type), [
      "run_started",
      "error_occurred",
      "run_failed",
    ]);
    const providerError = events[1]?.data.provider_error as Record<
      string,
      unknown
    >;
    assert.equal(providerError.kind, "rate_limit");
    assert.equal(events[1]?.data.error_message, "slow down");
  });
});

Deno.test("simulated resume() after a failure plays the script's resume step", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const script = {
      attempts: [{ error: { kind: "transport_timeout" } }],
      resume: { messages: ["back"], writes: [{ path: "r.md", text: "r" }] },
    };
    const first = await provider.start(request(dir, script));
    await drain(first);
    const resumed = await provider.resume(first.meta, {
      ...request(dir, script),
      cause: "failure",
      text: "Continue",
    });
    assert.equal(resumed.meta.session_id, first.meta.session_id);
    const events = await drain(resumed);
    assert.equal(await Deno.readTextFile(join(dir, "r.md")), "r");
    assert.deepEqual(events.map((e) => e.type).slice(-2), [
      "message_received",
      "run_completed",
    ]);
  });
});

Deno.test("simulated interrupt() stops the stream and a steer resume quotes the steer, then carries on", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const script = {
      attempts: [{ messages: ["a", "b", "c"] }],
    };
    const session = await provider.start(request(dir, script));
    assert.equal(session.acceptsInputAfterStart, false);
    const seen: ProviderEvent[] = [];
    for await (const event of session.events) {
      seen.push(event);
      if (event.type === "message_received" && event.data.content === "a") {
        session.interrupt();
      }
    }
    assert.equal(seen.at(-1)?.data.content, "a");
    const resumed = await provider.resume(session.meta, {
      ...request(dir, script),
      cause: "steer",
      text: "use British spelling",
    });
    const rest = await drain(resumed);
    assert.equal(rest[0]?.type, "run_started");
    assert.equal(rest[1]?.type, "message_received");
    assert.match(String(rest[1]?.data.content), /"use British spelling"/);
    const contents = rest.filter((e) => e.type === "message_received").map((
      e,
    ) => e.data.content);
    assert.deepEqual(contents.slice(1), ["b", "c"]);
    assert.equal(rest.at(-1)?.type, "run_completed");
  });
});

Deno.test("simulated send() on the stdin lane quotes the steer without interrupting", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      lane: "stdin",
      attempts: [{ messages: ["a", "b"] }],
    }));
    assert.equal(session.acceptsInputAfterStart, true);
    const seen: ProviderEvent[] = [];
    for await (const event of session.events) {
      seen.push(event);
      if (event.type === "message_received" && event.data.content === "a") {
        await session.send("mind the tests");
      }
    }
    const contents = seen.filter((e) => e.type === "message_received").map((
      e,
    ) => String(e.data.content));
    assert.equal(contents[0], "a");
    assert.match(contents[1]!, /"mind the tests"/);
    assert.equal(contents[2], "b");
    assert.equal(seen.at(-1)?.type, "run_completed");
  });
});

Deno.test("simulated session ends promptly when its signal aborts mid-delay", async () => {
  await withTempDir(async (dir) => {
    const abort = new AbortController();
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      attempts: [{ delay_ms: 60_000, messages: ["never"] }],
    }, { signal: abort.signal }));
    const done = drain(session);
    abort.abort();
    const events = await done;
    assert.deepEqual(events, []);
  });
});

Deno.test("parseSimulatedScript() refuses unknown keys and unknown error kinds, naming them", () => {
  assert.throws(
    () => parseSimulatedScript({ attempts: [{ mesages: ["x"] }] }),
    /simulate\.attempts\[0\] has unknown key "mesages"/,
  );
  assert.throws(
    () => parseSimulatedScript({ attempts: [{ error: { kind: "meteor" } }] }),
    /error\.kind "meteor" is unknown/,
  );
  assert.throws(
    () => parseSimulatedScript({ lane: "pigeon" }),
    /lane must be resume or stdin/,
  );
  assert.throws(
    () => parseSimulatedScript("play"),
    /simulate must be a mapping/,
  );
  assert.deepEqual(parseSimulatedScript(null), {
    steerInput: "resume",
    attempts: [],
    resume: null,
  });
});

Deno.test("simulated session interrupted deep into a long turn leaves exactly the unplayed events for the resume", async () => {
  await withTempDir(async (dir) => {
    const provider = createSimulatedProvider();
    const session = await provider.start(request(dir, {
      attempts: [{ repeat: 5000, messages: ["go"] }],
    }));
    let played = 0;
    for await (const _event of session.events) {
      if (++played === 7001) session.interrupt();
    }
    // run_started + 2 events per round + run_completed.
    const remaining = session.meta.remaining as ProviderEvent[];
    assert.equal(played, 7001);
    assert.equal(remaining.length, 1 + 2 * 5000 + 1 - 7001);
    assert.equal(remaining.at(-1)?.type, "run_completed");
    await session.close();
  });
});

Deno.test("only the simulated provider reads a script: checkScript and the script are its own, not every provider's", async () => {
  const claude = getProvider("claude");
  assert.equal("checkScript" in claude, false);
  assert.equal(isSimulatedProvider(claude), false);
  const simulated = getProvider("simulated");
  assert.ok(isSimulatedProvider(simulated));
  assert.match(String(simulated.checkScript({ lane: "x" })), /lane must be/);
  // A script bound to the provider plays without the request naming one.
  await withTempDir(async (dir) => {
    const { script: _none, ...plain } = request(dir, null);
    const session = await simulated
      .withScript({ attempts: [{ messages: ["bound"] }] })
      .start(plain);
    const events = await drain(session);
    assert.ok(
      events.some((e) =>
        e.type === "message_received" && e.data.content === "bound"
      ),
      JSON.stringify(events),
    );
  });
});
