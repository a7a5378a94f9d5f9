/**
 * The Amp fixture: Amp's server protocol is proprietary, so no scripted
 * model server can drive the real CLI; the fixture runs the fake `amp`
 * (`tests/_helpers/fake_cli/fake_amp.ts`) instead. It plays the same
 * `ScriptedReply` script a model server would, one reply per model turn:
 * text, thinking, tools (write, edit and shell really run in the prompt's
 * repo), usage and `delay_ms`; `{status: 401}` prints Amp's invalid-key
 * error on stderr and exits 1; other statuses end with an error `result`;
 * `hang` never answers; `drop` cuts a line short and exits 1.
 *
 * @module
 */

import { join } from "node:path";
import type { ScriptedReply } from "../model_server/server.ts";
import { type FakeCli, makeFakeAmp } from "../fake_cli/mod.ts";
import type { AgentFixture, FixtureFactory } from "./fixture.ts";

/** The Amp fixture, with the fake CLI's record of its invocations. */
export interface AmpFixture extends AgentFixture {
  /** The fake `amp` (its `invocations()` are the argv it got). */
  fake: FakeCli;
}

/** Makes the Amp fixture in `dir`, playing `replies`. */
export async function makeAmpFixture(
  dir: string,
  replies: ScriptedReply[],
): Promise<AmpFixture> {
  const fake = await makeFakeAmp(dir, replies);
  const home = join(dir, "amp_home");
  await Deno.mkdir(home, { recursive: true });
  return {
    provider: "amp",
    agent: { bin: fake.bin, permission_mode: "allow_all" },
    model: null,
    env: {
      HOME: home,
      AMP_API_KEY: "dummy-amp-key",
      // Nothing listens there: a real amp picked up by mistake fails fast.
      AMP_URL: "http://127.0.0.1:9",
    },
    server: null,
    fake,
    close(): Promise<void> {
      return Promise.resolve();
    },
  };
}

/** The Amp fixture for the shared provider suite. */
export const ampFixture: FixtureFactory = makeAmpFixture;
