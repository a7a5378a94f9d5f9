/**
 * Finding the real agent CLIs: it lives in `scripts/_harness/` so the
 * benchmarks find them the same way.
 *
 * @module
 */

export * from "../../scripts/_harness/agent_cli.ts";
