/**
 * What a steer's text is sent with, so the agent takes it as a correction
 * of the task it is doing, not a new one.
 *
 * @module
 */

/**
 * Added to a steer's text wherever it reaches the agent: written into a live
 * turn (`providers/cli_session.ts`) or resuming an interrupted one
 * (`runner/session_driver.ts`). The steer is recorded without it.
 */
export const CARRY_ON =
  "\n\n(This is a steer from the operator, not a new task. " +
  "Take it into account and carry on with the work you were doing: the task " +
  "is unchanged. Do not start over and do not stop to acknowledge this message.)";
