/**
 * The codex adapter (being written).
 *
 * @module
 */

import type { CliProfile } from "./cli_profile.ts";

/** The codex CLI's profile. */
export const codexProfile: CliProfile | null = null;
