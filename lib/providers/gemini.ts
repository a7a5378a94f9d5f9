/**
 * The gemini adapter (being written).
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";

/** The gemini CLI's profile. */
export const geminiProfile: CliProfile | null = null;
