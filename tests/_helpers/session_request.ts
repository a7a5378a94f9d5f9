/**
 * A provider session request for the adapters' unit tests: prompt 01's
 * first attempt in `dir`, with default agent options, its transcript lines
 * collected in `notes`.
 *
 * @module
 */

import { DEFAULT_AGENT_OPTIONS } from "../../lib/packet/agent_options.ts";
import type { SessionRequest } from "../../lib/providers/provider.ts";

/** The request; `text` is the prompt the agent gets. */
export function sessionRequest(
  dir: string,
  notes: string[] = [],
  text = "Do it.",
): SessionRequest {
  return {
    prompt_id: "01",
    attempt: 1,
    ordinal: 1,
    mode: "run",
    text,
    cwd: dir,
    repos: {},
    model: null,
    agent: DEFAULT_AGENT_OPTIONS,
    max_steers: 3,
    tmpdir: dir,
    note: (line) => notes.push(line),
    signal: new AbortController().signal,
  };
}
