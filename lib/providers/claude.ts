/**
 * The claude adapter (being written).
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";

/** The claude CLI's profile. */
export const claudeProfile: CliProfile | null = null;
