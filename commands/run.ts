/**
 * `prompt_runner run`: run a packet's prompts.
 *
 * @module
 */

import {
  applyRepoOverrides,
  checkStateRootSite,
  isWorkspaceId,
  locateRunTarget,
  lookupWorkspace,
  type PacketRunLocation,
  prepareWorkspace,
  resolveRunLocation,
} from "../lib/workspace/mod.ts";
import { relative, resolve } from "node:path";
import { currentRun, snapshot } from "../lib/control/mod.ts";
import { loadPacket } from "../lib/packet/mod.ts";
import { openPlane } from "../lib/control/plane.ts";
import { runPacket } from "../lib/runner/run_packet.ts";
import {
  checkRunId,
  EnvironmentError,
  StateError,
  UsageError,
} from "../lib/shared/mod.ts";
import { isEnvironmentError } from "../lib/shared/files.ts";
import { hangupIgnored } from "../lib/shared/hangup.ts";
import {
  parseCommandArgs,
  type ParsedArgs,
  secondsFlag,
  stringFlag,
  viewFlags,
} from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { StdoutClosedError } from "./_output.ts";
import { RUN_INFO } from "./_help.ts";
import { shellWord } from "./status/_report.ts";
import { errorText } from "../lib/shared/errors.ts";
import {
  onStopSignals,
  stopExitCode,
  type StopSignal,
} from "../lib/shared/stop_signals.ts";
import { bridgeRun, RUN_FLEET_FLAGS, runFleetOf } from "./_run_fleet.ts";

const FLAGS = {
  provider: { type: "string" },
  model: { type: "string" },
  "log-mode": { type: "string" },
  "tool-output": { type: "string" },
  thinking: { type: "string" },
  diff: { type: "string" },
  "state-root": { type: "string" },
  workspace: { type: "string" },
  packet: { type: "string" },
  resume: { type: "boolean" },
  "run-id": { type: "string" },
  "progress-timeout": { type: "string" },
  json: { type: "boolean" },
  ...RUN_FLEET_FLAGS,
} as const;

/** A path as a user would type it: relative below the cwd, else absolute. */
function shownPath(cwd: string, path: string): string {
  const rel = relative(cwd, path);
  return rel === "" ? "." : rel.startsWith("..") ? path : rel;
}

/** The `prompt_runner run` command that continues this run with `--resume`. */
function resumeCommand(
  context: CommandContext,
  args: ParsedArgs,
  packetDir: string,
  workspaceId: string | null,
  ids: string[],
): string {
  const words = workspaceId === null
    ? [shownPath(context.cwd, packetDir)]
    : [workspaceId];
  const packet = stringFlag(args, "packet");
  if (workspaceId !== null && packet !== undefined) {
    words.push("--packet", packet);
  }
  const stateRoot = stringFlag(args, "state-root");
  if (stateRoot !== undefined) words.push("--state-root", stateRoot);
  return ["prompt_runner", "run", ...[...words, ...ids].map(shellWord)]
    .join(" ") + " --resume";
}

/**
 * Picks the run id: `--run-id`, for `--resume` the state root's last run
 * when it can go on (its runner died, or it was interrupted), or a new one.
 */
async function chooseRunId(
  resume: boolean,
  runId: string | undefined,
  stateRoot: string,
): Promise<string | undefined> {
  if (runId !== undefined) {
    if (resume) {
      throw new UsageError("Give --resume or --run-id, not both");
    }
    return runId;
  }
  if (!resume) return undefined;
  const ref = await currentRun(stateRoot);
  const last = await snapshot(ref);
  // An interrupted run goes on as a killed one does; a run that completed,
  // failed or was blocked is over.
  if (last.status !== "running" && last.status !== "interrupted") {
    throw new StateError(
      `Cannot resume run ${ref.run_id}: it finished (${last.status})`,
      { hint: "Start a new run without --resume" },
    );
  }
  return ref.run_id;
}

/**
 * Where a workspace run lives: `--workspace FILE` (prepared on the way), or
 * a workspace id as the first argument. `null` for a packet run.
 */
async function workspaceRun(
  context: CommandContext,
  args: ParsedArgs,
): Promise<{ location: PacketRunLocation; ids: string[] } | null> {
  const file = stringFlag(args, "workspace");
  const packet = stringFlag(args, "packet");
  const common = {
    needs: "packet" as const,
    cwd: context.cwd,
    stateRoot: stringFlag(args, "state-root"),
    packet,
    command: "run",
  };
  if (file !== undefined) {
    if (common.stateRoot === undefined) {
      await prepareWorkspace(file, {
        cwd: context.cwd,
        ...(packet === undefined ? {} : { packet }),
      });
    }
    return {
      location: await resolveRunLocation(undefined, {
        ...common,
        workspace: file,
      }),
      ids: args.positionals,
    };
  }
  const [first, ...ids] = args.positionals;
  if (
    first !== undefined && isWorkspaceId(first) &&
    await lookupWorkspace(first) !== null
  ) {
    return {
      location: await resolveRunLocation(first, common),
      ids,
    };
  }
  if (packet !== undefined) {
    throw new UsageError(
      "--packet DIR goes with --workspace FILE or a workspace id",
      { hint: "Run 'prompt_runner run --help'" },
    );
  }
  return null;
}

async function run(context: CommandContext, argv: string[]): Promise<number> {
  const args = parseCommandArgs("run", argv, FLAGS);
  if (args.values.help) {
    await context.stdout.write(RUN_INFO.help);
    return 0;
  }
  const workspace = await workspaceRun(context, args);
  const [packetDir, ...packetIds] = args.positionals;
  if (workspace === null && packetDir === undefined) {
    throw new UsageError("Missing the packet directory", {
      hint:
        "Run 'prompt_runner run PACKET [IDS...]' or 'prompt_runner run WORKSPACE_ID'; see 'prompt_runner run --help'",
    });
  }
  const ids = workspace === null ? packetIds : workspace.ids;
  const view = viewFlags(args.values);
  const givenRunId = stringFlag(args, "run-id");
  if (givenRunId !== undefined) checkRunId(givenRunId);
  const progressTimeout = stringFlag(args, "progress-timeout");
  const progressTimeoutMs = progressTimeout === undefined
    ? undefined
    : secondsFlag("--progress-timeout", progressTimeout) * 1000;
  const fleet = runFleetOf(
    args.values,
    context.cwd,
    workspace?.location.fleet,
  );
  let packet = await loadPacket(workspace?.location.packet_dir ?? packetDir!);
  if (workspace !== null) {
    // The operator's checkouts replace the packet's repos; the run's state
    // goes to the workspace's root, never under the packet.
    packet = await applyRepoOverrides(
      packet,
      workspace.location.repo_overrides,
      workspace.location.workspace_file ?? "workspace.yml",
    );
    // The workspace's notify: rules apply in addition to the packet's.
    const notify = [...packet.notify, ...workspace.location.notify ?? []];
    packet = { ...packet, notify };
  }
  const flagRoot = stringFlag(args, "state-root");
  const namedRoot = workspace?.location.state_root ??
    (flagRoot === undefined ? undefined : resolve(context.cwd, flagRoot));
  if (namedRoot !== undefined) {
    // A named state root never swallows the packet, a checkout or the
    // operator's files: checked with the repos the run really uses.
    await checkStateRootSite(
      namedRoot,
      {
        source: workspace === null ? { flag: "--state-root" } : {
          workspace_file: workspace.location.workspace_file ??
            "workspace.yml",
        },
        packet_dir: packet.dir,
        repos: packet.repos.map((repo) => repo.path),
      },
    );
  }
  for (const warning of packet.warnings) {
    await context.stderr.line(`warning: ${warning}`);
  }
  const json = args.values.json === true;
  const abort = new AbortController();
  let signalled: StopSignal | null = null;
  let stdoutClosed = false;
  let outputFailure: Error | null = null;
  // A closed terminal (SIGHUP) ends the run like SIGTERM, unless the runner
  // was started under nohup: then it keeps running, as nohup promised.
  const nohup = await hangupIgnored();
  let bridge: Awaited<ReturnType<typeof bridgeRun>> | null = null;
  const removeListeners = onStopSignals(
    ["SIGINT", "SIGTERM", "SIGHUP"],
    (signal, exitCode) => {
      if (signal === "SIGHUP" && nohup) return;
      if (signalled !== null) Deno.exit(exitCode);
      signalled = signal;
      abort.abort();
    },
  );
  try {
    const stateRoot = workspace?.location.state_root ?? flagRoot;
    const runId = await chooseRunId(
      args.values.resume === true,
      stringFlag(args, "run-id"),
      locateRunTarget(
        stateRoot === undefined ? packet.dir : {
          packet_dir: packet.dir,
          state_root: resolve(context.cwd, stateRoot),
        },
        packet.dir,
      ).state_root,
    );
    const warn = async (message: string): Promise<void> => {
      await context.stderr.line(`warning: ${message}`).catch(() => {});
    };
    // A fleet run's bridge starts once its plane is open.
    bridge = fleet === null ? null : await bridgeRun(openPlane, fleet, {
      workspaceId: workspace?.location.workspace_id ?? null,
      warn,
      async hint(message: string): Promise<void> {
        await context.stderr.line(`hint: ${message}`).catch(() => {});
      },
    });
    const result = await runPacket(packet, {
      // The CLI's runs report to the file control plane in their state root.
      plane: bridge?.plane ?? openPlane,
      ...(fleet === null ? {} : { fleet: fleet.choice.parsed.shown }),
      ...(runId === undefined ? {} : { runId }),
      warn,
      ids,
      ...(stringFlag(args, "provider")
        ? { provider: stringFlag(args, "provider")! }
        : {}),
      ...(stringFlag(args, "model")
        ? { model: stringFlag(args, "model")! }
        : {}),
      view,
      ...(progressTimeoutMs === undefined ? {} : { progressTimeoutMs }),
      ...(stateRoot === undefined ? {} : { stateRoot }),
      ...(workspace?.location.workspace_id
        ? { workspaceId: workspace.location.workspace_id }
        : {}),
      signal: abort.signal,
      output: {
        json,
        color: context.color,
        async write(text: string): Promise<void> {
          if (stdoutClosed) return;
          try {
            await context.stdout.write(text);
          } catch (error) {
            if (isEnvironmentError(error)) {
              // stdout is a full disk (or /dev/full): stop the run, say so.
              outputFailure ??= error as Error;
              abort.abort();
              return;
            }
            if (!(error instanceof StdoutClosedError)) throw error;
            // The reader is gone (| head): stop the run and end quietly.
            stdoutClosed = true;
            abort.abort();
          }
        },
      },
    });
    const resume = (): string =>
      resumeCommand(
        context,
        args,
        packet.dir,
        workspace?.location.workspace_id ?? null,
        ids,
      );
    if (outputFailure !== null) {
      throw new EnvironmentError(
        `Cannot write the run's output to standard output: ${
          errorText(outputFailure).replace(/:.*$/, "")
        }; the run stopped and is recorded as interrupted`,
        {
          code: "OUTPUT_FAILED",
          hint:
            `Send the output somewhere with room, then continue the run: ${resume()}`,
        },
      );
    }
    if (stdoutClosed) return 0;
    if (signalled !== null) {
      await context.stderr.line(
        `hint: the run was interrupted; continue it with: ${resume()}`,
      ).catch(() => {});
      return stopExitCode(signalled);
    }
    if (result.status === "completed") return 0;
    await context.stderr.line(
      `error: the run ${result.status}: ${
        result.reason ?? "see the events above"
      }`,
    );
    await context.stderr.line(
      `hint: 'prompt_runner status ${
        workspace?.location.workspace_id ?? shownPath(context.cwd, packet.dir)
      }' shows each prompt's attempts and verifier result`,
    );
    return 1;
  } finally {
    // The run is over (whatever ended it): its bridge publishes the rest.
    await bridge?.finish();
    removeListeners();
  }
}

/** The `run` command. */
export const runCommand: Command = {
  ...RUN_INFO,
  run,
};
