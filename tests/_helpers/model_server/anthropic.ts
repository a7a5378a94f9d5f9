/**
 * The scripted model server (anthropic): it lives in `scripts/_harness/` so the
 * benchmarks drive the same stand-ins as the tests.
 *
 * @module
 */

export * from "../../../scripts/_harness/model_server/anthropic.ts";
