/**
 * The amp adapter (being written).
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";

/** The amp CLI's profile. */
export const ampProfile: CliProfile | null = null;
