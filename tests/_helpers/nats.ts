/**
 * Real NATS servers for the fleet tests (see `scripts/_harness/nats.ts`).
 *
 * @module
 */

export * from "../../scripts/_harness/nats.ts";
