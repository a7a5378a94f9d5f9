/**
 * `prompt_runner fleet`: the fleet's runs (`fleet ls`), and a sidecar that
 * joins runs started without `--fleet` to it (`fleet join`), DESIGN §12.
 *
 * @module
 */

import { resolveRunLocation } from "../lib/workspace/mod.ts";
import { terminalSafe } from "../lib/render/mod.ts";
import { UsageError } from "../lib/shared/mod.ts";
import { onStopSignals, stopExitCode } from "../lib/shared/stop_signals.ts";
import { parseCommandArgs } from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { FLEET_INFO, FLEET_JOIN_HELP, FLEET_LS_HELP } from "./_fleet_help.ts";
import { FLEET_FLAGS, fleetChoice, fleetModule } from "./_fleet_flags.ts";
import { RUN_FLEET_FLAGS, runFleetOf } from "./_run_fleet.ts";

function noFleet(command: string): never {
  throw new UsageError(`'fleet ${command}' needs a fleet: give --fleet URL`, {
    code: "NO_FLEET",
    hint: "Or set PROMPT_RUNNER_FLEET=nats://host:port",
  });
}

/** `fleet ls`: one line (or JSON object) per run of the fleet. */
async function list(context: CommandContext, argv: string[]): Promise<number> {
  const args = parseCommandArgs("fleet ls", argv, {
    ...FLEET_FLAGS,
    json: { type: "boolean" },
  });
  if (args.values.help) {
    await context.stdout.write(FLEET_LS_HELP);
    return 0;
  }
  if (args.positionals.length > 0) {
    throw new UsageError(
      `'fleet ls' takes no arguments, found ${
        JSON.stringify(args.positionals[0])
      }`,
      { hint: "Run 'prompt_runner fleet ls --help'" },
    );
  }
  const choice = fleetChoice(args.values, context.cwd) ?? noFleet("ls");
  const { openFleetClient } = await fleetModule();
  await using client = await openFleetClient({
    url: choice.parsed,
    ...(choice.creds_file === null ? {} : { credsFile: choice.creds_file }),
    ...(choice.ca_file === null ? {} : { caFile: choice.ca_file }),
  });
  const runs = await client.runs();
  if (args.values.json) {
    for (const run of runs) {
      await context.stdout.json({
        v: 1,
        key: run.key,
        node: run.node,
        root: run.root,
        run_id: run.run_id,
        packet: run.packet,
        status: run.status,
        prompt_id: run.prompt_id,
        attempt: run.attempt,
        updated_at: run.updated_at,
      });
    }
    return 0;
  }
  if (runs.length === 0) {
    await context.stderr.line(`The fleet at ${client.shown} has no runs yet`);
    return 0;
  }
  const rows = [
    ["NODE", "ROOT", "RUN", "PACKET", "STATUS", "PROMPT", "ATTEMPT", "UPDATED"],
    ...runs.map((run) => [
      run.node,
      run.root,
      run.run_id,
      run.packet || "-",
      run.status,
      run.prompt_id ?? "-",
      run.attempt === null ? "-" : String(run.attempt),
      run.updated_at,
    ]),
  ].map((row) => row.map((cell) => terminalSafe(cell)));
  const widths = rows[0]!.map((_, column) =>
    Math.max(...rows.map((row) => row[column]!.length))
  );
  const text =
    rows.map((row) =>
      row.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")
        .trimEnd()
    ).join("\n") + "\n";
  await context.stdout.write(text);
  return 0;
}

/** `fleet join`: bridges each TARGET's runs to the fleet until stopped. */
async function join(context: CommandContext, argv: string[]): Promise<number> {
  const args = parseCommandArgs("fleet join", argv, {
    ...RUN_FLEET_FLAGS,
    once: { type: "boolean" },
  });
  if (args.values.help) {
    await context.stdout.write(FLEET_JOIN_HELP);
    return 0;
  }
  const fleet = runFleetOf(args.values, context.cwd, undefined) ??
    noFleet("join");
  const targets = args.positionals.length > 0 ? args.positionals : [undefined];
  const locations = [];
  for (const target of targets) {
    if (target?.startsWith("fleet:")) {
      throw new UsageError(
        `'fleet join' takes this machine's runs, not a fleet TARGET: ${target}`,
      );
    }
    locations.push(
      await resolveRunLocation(target, {
        needs: "state_root",
        cwd: context.cwd,
        command: "fleet join",
      }),
    );
  }
  const { joinRoots } = await import("./_fleet_join.ts");
  const abort = new AbortController();
  let signalled: Deno.Signal | null = null;
  const removeListeners = onStopSignals(
    ["SIGINT", "SIGTERM", "SIGHUP"],
    (signal, exitCode) => {
      if (signalled !== null) Deno.exit(exitCode);
      signalled = signal;
      abort.abort();
    },
  );
  try {
    await joinRoots(context, locations, fleet, {
      once: args.values.once === true,
      signal: abort.signal,
    });
  } finally {
    removeListeners();
  }
  return signalled === null ? 0 : stopExitCode(signalled);
}

async function fleet(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await context.stderr.write(FLEET_INFO.help);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    await context.stdout.write(FLEET_INFO.help);
    return 0;
  }
  if (name === "ls") return await list(context, rest);
  if (name === "join") return await join(context, rest);
  throw new UsageError(`Unknown fleet command "${name}"`, {
    hint: "Fleet commands are ls, join; run 'prompt_runner fleet --help'",
  });
}

/** The `fleet` command. */
export const fleetCommand: Command = { ...FLEET_INFO, run: fleet };
