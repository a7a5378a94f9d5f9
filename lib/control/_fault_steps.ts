/**
 * The steps of request processing a test can stop the runner at, and the
 * shape of the hook that does it. Apart from the hook itself, so that the
 * plane can name them without loading the hook.
 *
 * @module
 */

/** A step of request processing a test can stop the runner at. */
export type FaultStep =
  | "request_decided"
  | "receipt_written"
  | "log_written"
  | "request_deleted"
  | "steer_recorded";

/** Every {@linkcode FaultStep}, in the order processing passes them. */
export const FAULT_STEPS: readonly FaultStep[] = [
  "request_decided",
  "receipt_written",
  "log_written",
  "request_deleted",
  "steer_recorded",
];

/**
 * Called as request processing passes each step. Production planes have
 * none; tests inject one that kills the process at a chosen step.
 */
export type FaultHook = (step: FaultStep) => void;
