/**
 * An agent fixture (claude_acp): it lives in `scripts/_harness/agents/` so the
 * benchmarks drive the same agents as the tests.
 *
 * @module
 */

export * from "../../../scripts/_harness/agents/claude_acp.ts";
