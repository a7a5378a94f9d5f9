/**
 * Every top-level command, in help order: each is described here and its
 * module imported only when it runs, so `--help` and a quick read load
 * little more than what they use.
 *
 * @module
 */

import type { CommandEntry } from "./_context.ts";
import { describedEntry, importCommand } from "./_dispatch.ts";
import {
  RUN_INFO,
  SERVE_INFO,
  STATUS_INFO,
  WATCH_INFO,
  WORKSPACE_INFO,
} from "./_help.ts";
import { FLEET_INFO } from "./_fleet_help.ts";
import { controlCommand } from "./control.ts";
import { CONTROL_INFO } from "./control/_registry.ts";

/** The commands `main.ts` dispatches to. */
export const COMMANDS: readonly CommandEntry[] = [
  describedEntry(
    RUN_INFO,
    async () =>
      (await importCommand<typeof import("./run.ts")>("./run.ts")).runCommand,
  ),
  describedEntry(
    STATUS_INFO,
    async () =>
      (await importCommand<typeof import("./status.ts")>("./status.ts"))
        .statusCommand,
  ),
  describedEntry(
    WATCH_INFO,
    async () =>
      (await importCommand<typeof import("./watch.ts")>("./watch.ts"))
        .watchCommand,
  ),
  // `control` only dispatches, and is as light as this registry: loaded
  // with it, so a control command costs one dynamic import, not two.
  describedEntry(CONTROL_INFO, () => Promise.resolve(controlCommand)),
  describedEntry(
    WORKSPACE_INFO,
    async () =>
      (await importCommand<typeof import("./workspace.ts")>("./workspace.ts"))
        .workspaceCommand,
  ),
  describedEntry(
    SERVE_INFO,
    async () =>
      (await importCommand<typeof import("./serve.ts")>("./serve.ts"))
        .serveCommand,
  ),
  describedEntry(
    FLEET_INFO,
    async () =>
      (await importCommand<typeof import("./fleet.ts")>("./fleet.ts"))
        .fleetCommand,
  ),
];
