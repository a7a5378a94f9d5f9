/**
 * The lanes of `steer_ack.ts`: each one's stand-in (the scripted model
 * server whose every reply is held, so a turn is in flight to steer into)
 * and its provider set-up.
 *
 * @module
 */

import type { AgentName } from "../_harness/agent_cli.ts";
import { claudeFixture } from "../_harness/agents/claude.ts";
import { claudeAcpFixture } from "../_harness/agents/claude_acp.ts";
import { codexFixture } from "../_harness/agents/codex.ts";
import type {
  AgentFixture,
  FixtureFactory,
} from "../_harness/agents/fixture.ts";
import { geminiFixture } from "../_harness/agents/gemini.ts";
import type {
  ModelServer,
  ScriptedReply,
} from "../_harness/model_server/server.ts";

/** How long the stand-in holds each model reply (from its request). */
export const HOLD_MS = 2000;
/** Replies scripted ahead of the agent, so the script never runs dry. */
const AHEAD = 3;

type Json = Record<string, unknown>;

/**
 * The stand-in's script as the bench plays it: every model reply (a line of
 * text and a harmless shell command, so the turn goes on) is held
 * {@linkcode HOLD_MS} from its request, which keeps a turn in flight to
 * steer into; replies are pushed a few ahead of the agent until
 * {@linkcode finish}, which releases every held reply and lets the script
 * run out (the stand-in's fallback, "Done.", then ends the turn).
 */
export class HeldScript {
  readonly #gates = new Map<
    ScriptedReply,
    { release: () => void; releaseAt: number | null; released: boolean }
  >();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  #server: ModelServer | null = null;
  #ticker: ReturnType<typeof setInterval> | null = null;
  #pushed = 0;

  /** The first replies, for the fixture's server. */
  first(): ScriptedReply[] {
    return Array.from({ length: AHEAD }, () => this.#reply());
  }

  /** Starts following the server's requests. */
  attach(server: ModelServer): void {
    this.#server = server;
    this.#ticker = setInterval(() => this.#tick(), 10);
  }

  #reply(): ScriptedReply {
    const { promise, resolve } = Promise.withResolvers<void>();
    const reply: ScriptedReply = {
      text: "Working on it.",
      tools: [{ kind: "shell", command: "true" }],
      until: promise,
    };
    const gate = {
      release: (): void => {
        gate.released = true;
        resolve();
      },
      releaseAt: null as number | null,
      released: false,
    };
    this.#gates.set(reply, gate);
    this.#pushed++;
    return reply;
  }

  #tick(): void {
    const server = this.#server!;
    for (const request of server.requests) {
      const gate = request.reply ? this.#gates.get(request.reply) : undefined;
      if (gate === undefined || gate.releaseAt !== null) continue;
      gate.releaseAt = request.at + HOLD_MS;
      const timer = setTimeout(() => {
        this.#timers.delete(timer);
        gate.release();
      }, Math.max(0, gate.releaseAt - Date.now()));
      this.#timers.add(timer);
    }
    while (this.#pushed - server.script.taken < AHEAD) {
      server.script.push(this.#reply());
    }
  }

  /** Whether a reply is held now with at least `left` ms still to go. */
  holding(left: number): boolean {
    const now = Date.now();
    for (const gate of this.#gates.values()) {
      if (
        gate.releaseAt !== null && !gate.released &&
        gate.releaseAt - now >= left
      ) return true;
    }
    return false;
  }

  /** Releases every reply and stops scripting more. */
  finish(): void {
    if (this.#ticker !== null) clearInterval(this.#ticker);
    this.#ticker = null;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const gate of this.#gates.values()) gate.release();
  }
}

/** What a lane sets up for its run. */
export interface LaneRig {
  /** The fixture (provider, agent block, env) the packet is made for. */
  fixture: AgentFixture;
  /** The stand-in's held script, or `null` (simulated). */
  script: HeldScript | null;
}

/** One steer lane. */
export interface Lane {
  /** The provider, as the row names it. */
  name: string;
  /** What delivers a steer on this lane (the record's `mechanism`). */
  mechanism: string;
  /** The CLIs it needs. */
  clis: AgentName[];
  /** Sets up the stand-in and the provider in `dir`. */
  rig(dir: string): Promise<LaneRig>;
}

/** A fixture on the held script, with `agent` keys added. */
function standIn(
  factory: FixtureFactory,
  agent: Json = {},
): (dir: string) => Promise<LaneRig> {
  return async (dir) => {
    const script = new HeldScript();
    const fixture = await factory(dir, script.first());
    script.attach(fixture.server!);
    return {
      fixture: { ...fixture, agent: { ...fixture.agent, ...agent } },
      script,
    };
  };
}

/** The simulated provider on its stdin lane, playing a long stream. */
function simulatedRig(): Promise<LaneRig> {
  return Promise.resolve({
    fixture: {
      provider: "simulated",
      agent: {},
      model: null,
      env: {},
      server: null,
      prompt_front_matter: {
        simulate: {
          lane: "stdin",
          attempts: [{
            delay_ms: 100,
            repeat: 8,
            thinking: ["Thinking it over."],
            messages: ["Working on it."],
            tools: [{ name: "Bash", input: { command: "true" }, output: "" }],
            usage: { input_tokens: 100, output_tokens: 10 },
          }],
        },
      },
      close: () => Promise.resolve(),
    },
    script: null,
  });
}

/** The lanes, the no-agent baseline first. */
export const LANES: Lane[] = [
  {
    name: "simulated",
    mechanism: "simulated",
    clis: [],
    rig: simulatedRig,
  },
  {
    name: "claude",
    mechanism: "stdin_echo",
    clis: ["claude"],
    rig: standIn(claudeFixture),
  },
  {
    name: "codex",
    mechanism: "turn_steer",
    clis: ["codex"],
    rig: standIn(codexFixture, { transport: "app_server" }),
  },
  {
    name: "gemini",
    mechanism: "acp_prompt",
    clis: ["gemini"],
    rig: standIn(geminiFixture, { transport: "acp" }),
  },
  {
    name: "acp",
    mechanism: "acp_prompt",
    clis: ["claude-code-acp", "claude"],
    rig: standIn(claudeAcpFixture),
  },
];
