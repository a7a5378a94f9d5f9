/**
 * Every provider the shared e2e suite runs against: the simulated provider
 * and each real agent CLI (skipped loudly when the CLI is not installed).
 *
 * @module
 */

import type { AgentName } from "../agent_cli.ts";
import type { FixtureFactory } from "./fixture.ts";
import { simulatedFixture } from "./simulated.ts";
import { ampFixture } from "./amp.ts";
import { claudeFixture } from "./claude.ts";
import { codexFixture } from "./codex.ts";
import { geminiFixture } from "./gemini.ts";

/** A provider of the shared suite. */
export interface SuiteProvider {
  /** The provider's name. */
  name: string;
  /** The CLI it needs, or `null`. */
  cli: AgentName | null;
  /** Whether the steer lane is send_input (else interrupt_and_resume). */
  sendInput: boolean;
  /** What delivers a steer (the intervention record's `mechanism`). */
  mechanism: string;
  /** Makes the fixture. */
  fixture: FixtureFactory;
}

/** The providers, simulated first. */
export const SUITE_PROVIDERS: SuiteProvider[] = [
  {
    name: "simulated",
    cli: null,
    sendInput: false,
    mechanism: "resume",
    fixture: simulatedFixture,
  },
  {
    name: "claude",
    cli: "claude",
    sendInput: true,
    mechanism: "stdin_echo",
    fixture: claudeFixture,
  },
  // codex on app-server and gemini on ACP (their default transports).
  {
    name: "codex",
    cli: "codex",
    sendInput: true,
    mechanism: "turn_steer",
    fixture: codexFixture,
  },
  {
    name: "gemini",
    cli: "gemini",
    sendInput: true,
    mechanism: "acp_prompt",
    fixture: geminiFixture,
  },
  // Amp's service is proprietary: its fixture runs the fake amp.
  {
    name: "amp",
    cli: null,
    sendInput: false,
    mechanism: "resume",
    fixture: ampFixture,
  },
];
