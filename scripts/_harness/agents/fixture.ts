/**
 * What each provider's test fixture gives a test that runs a packet with a
 * real agent CLI against the scripted model server (or the simulated
 * provider): the manifest's `provider` and `agent:` block and the runner's
 * environment. The shared e2e suite runs the same checks with each one.
 *
 * @module
 */

import type { ModelServer, ScriptedReply } from "../model_server/server.ts";

/** A provider set up for a test. */
export interface AgentFixture {
  /** The provider's name, as the manifest's `provider:` spells it. */
  provider: string;
  /** The manifest's `agent:` block (bin, modes that let tools run unattended). */
  agent: Record<string, unknown>;
  /** The model to name in the manifest, or `null`. */
  model: string | null;
  /**
   * Environment for the runner process (HOME in the test's dir, the base
   * URL, a dummy key); added to the test's own.
   */
  env: Record<string, string>;
  /**
   * Keys added to each prompt's front matter (the simulated provider's
   * `simulate:` script), if any.
   */
  prompt_front_matter?: Record<string, unknown>;
  /** The scripted model server, or `null` (simulated, fake CLIs). */
  server: ModelServer | null;
  /** Stops the server and removes what the fixture made. */
  close(): Promise<void>;
}

/**
 * Makes a fixture: `dir` is the test's temporary directory (the fixture puts
 * HOME and its other files under it), `replies` the model's script.
 */
export type FixtureFactory = (
  dir: string,
  replies: ScriptedReply[],
) => Promise<AgentFixture>;
