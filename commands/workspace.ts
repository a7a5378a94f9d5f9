/**
 * `prompt_runner workspace prepare|list|forget`: operator workspaces, whose
 * run state lives outside the packet (DESIGN §10).
 *
 * @module
 */

import {
  forgetWorkspace,
  listWorkspaces,
  prepareWorkspace,
} from "../lib/workspace/mod.ts";
import { terminalSafe } from "../lib/render/ansi.ts";
import { UsageError } from "../lib/shared/errors.ts";
import { parseCommandArgs, type ParsedArgs } from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { WORKSPACE_INFO } from "./_help.ts";

const PREPARE_HELP = `Usage: prompt_runner workspace prepare WORKSPACE_YML

Checks the workspace file, creates its state root (mode 0700), tags it with
state_root.json and registers the workspace id. Preparing again is
harmless; it moves the id when the file's state_root changed.

The state root must be a new or empty directory, or one prompt_runner made
(it holds only run state, or the workspace's tag). It is refused when it
contains the packet, is or contains a repo checkout (a .git inside counts),
contains prompt_runner's state home, holds files prompt_runner did not
make, or lies inside or around another workspace's state root; so is the
root directory, a system or shared directory (/tmp, /usr, /var/lib, ...,
any sticky directory), the home directory, or another user's. Its mode is
never changed unless prompt_runner made it.

Options:
  -h, --help          Show this help

Exit codes:
  0 prepared   2 invalid workspace file (the message names the file, key
  and line), or a state_root that contains the packet, a checkout or the
  state home, or holds files prompt_runner did not make   3 the file, its
  packet or a repo path does not exist   4 the state root is another
  workspace's, inside or around another's, a system, shared or home
  directory, another user's, or not usable
`;

const LIST_HELP = `Usage: prompt_runner workspace list [options]

Shows each prepared workspace: its id, its last run (id and status) and its
state root.

Options:
  --json              One JSON object per workspace (NDJSON): {id,
                      state_root, manifest, packet, last_run, problem}
  -h, --help          Show this help

Exit codes:
  0 ok   2 usage error   4 the registry is unreadable
`;

const FORGET_HELP = `Usage: prompt_runner workspace forget ID [options]

Unregisters a workspace: its id no longer names it, and commands run in its
packet or repos no longer find it. Its state root (run state, logs, steers,
amendments) is kept unless --delete is given.

With --delete, what prompt_runner made in the state root is deleted (run
state, logs, the control directory, steers, amendments, the tag), never
following a link; anything else is kept, and the state root itself is
removed only when nothing is left. The output names what was deleted and
what was kept. A state root without the workspace's tag is kept whole. The
run lock is held meanwhile: a run of the workspace starting then refuses to
start (exit 3).

Options:
  --delete            Also delete what prompt_runner made in the state root
                      (refused while a run is using it, when it is tagged
                      for another id, or when it is a system directory or
                      holds a checkout)
  -h, --help          Show this help

Exit codes:
  0 forgotten   2 usage error   3 no such workspace   4 deleting refused
`;

/** Parses a subcommand's flags, and answers `--help`. */
async function parse(
  context: CommandContext,
  name: string,
  help: string,
  argv: string[],
  flags: Parameters<typeof parseCommandArgs>[2],
  arity: number,
): Promise<ParsedArgs | null> {
  const args = parseCommandArgs(`workspace ${name}`, argv, flags);
  if (args.values.help) {
    await context.stdout.write(help);
    return null;
  }
  if (args.positionals.length !== arity) {
    throw new UsageError(
      arity === 0
        ? `Too many arguments for "workspace ${name}"`
        : `"workspace ${name}" takes ${
          name === "prepare" ? "one WORKSPACE_YML" : "one ID"
        }, found ${args.positionals.length} arguments`,
      { hint: `Run 'prompt_runner workspace ${name} --help'` },
    );
  }
  return args;
}

async function prepare(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = await parse(context, "prepare", PREPARE_HELP, argv, {}, 1);
  if (args === null) return 0;
  const prepared = await prepareWorkspace(args.positionals[0]!, {
    cwd: context.cwd,
  });
  const { workspace } = prepared;
  await context.stdout.line(terminalSafe(
    `Prepared workspace ${workspace.id}: state root ${prepared.state_root}`,
  ));
  if (prepared.moved_from !== null) {
    await context.stderr.line(
      `warning: workspace ${workspace.id} was registered at "${prepared.moved_from}"; it now uses "${prepared.state_root}" (the old root is kept)`,
    );
  }
  await context.stderr.line(
    workspace.packet === null
      ? `hint: 'prompt_runner run --workspace ${
        args.positionals[0]
      } --packet DIR' runs a packet in it`
      : `hint: 'prompt_runner run ${workspace.id}' runs its packet`,
  );
  return 0;
}

async function list(context: CommandContext, argv: string[]): Promise<number> {
  const args = await parse(
    context,
    "list",
    LIST_HELP,
    argv,
    { json: { type: "boolean" } },
    0,
  );
  if (args === null) return 0;
  const entries = await listWorkspaces();
  if (args.values.json) {
    for (const entry of entries) await context.stdout.json(entry);
    return 0;
  }
  if (entries.length === 0) {
    await context.stderr.line(
      "No workspaces are prepared; 'prompt_runner workspace prepare WORKSPACE_YML' adds one",
    );
    return 0;
  }
  const rows = entries.map((entry) => [
    entry.id,
    entry.problem !== null
      ? `(${entry.problem})`
      : entry.last_run === null
      ? "never run"
      : `${entry.last_run.status} ${entry.last_run.run_id}`,
    entry.state_root,
  ]);
  const widths = [0, 1].map((i) =>
    Math.max(
      ...[["ID", "LAST RUN"][i]!, ...rows.map((r) => r[i]!)].map((t) =>
        t.length
      ),
    )
  );
  const line = (row: string[]): string =>
    `${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}`;
  let text = line(["ID", "LAST RUN", "STATE ROOT"]) + "\n";
  for (const row of rows) text += line(row) + "\n";
  await context.stdout.write(terminalSafe(text));
  return 0;
}

async function forget(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = await parse(
    context,
    "forget",
    FORGET_HELP,
    argv,
    { delete: { type: "boolean" } },
    1,
  );
  if (args === null) return 0;
  const id = args.positionals[0]!;
  const remove = args.values.delete === true;
  const forgotten = await forgetWorkspace(id, { remove });
  const root = forgotten.state_root;
  const listed = (names: string[]): string => names.join(", ");
  const lines: Record<typeof forgotten.outcome, string[]> = {
    kept: [`Forgot workspace ${id}; its state root ${root} is kept`],
    missing: [
      `Forgot workspace ${id}; its state root ${root} no longer exists`,
    ],
    untagged: [
      `Forgot workspace ${id}; deleted nothing: its state root ${root} has no state_root.json tag, so prompt_runner cannot tell it made it (kept)`,
    ],
    deleted: [
      `Forgot workspace ${id} and deleted its state root ${root} (${
        listed(forgotten.deleted)
      })`,
    ],
    partly_deleted: [
      forgotten.deleted.length === 0
        ? `Forgot workspace ${id}; deleted nothing from its state root ${root}`
        : `Forgot workspace ${id}; deleted from its state root ${root}: ${
          listed(forgotten.deleted)
        }`,
      `Kept ${root}, which still holds what prompt_runner did not make: ${
        listed(forgotten.kept)
      }`,
    ],
  };
  for (const line of lines[forgotten.outcome]) {
    await context.stdout.line(terminalSafe(line));
  }
  return 0;
}

const SUBCOMMANDS: Record<
  string,
  (context: CommandContext, argv: string[]) => Promise<number>
> = { prepare, list, forget };

async function workspace(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    await context.stderr.write(WORKSPACE_INFO.help);
    return 2;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    await context.stdout.write(WORKSPACE_INFO.help);
    return 0;
  }
  const sub = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (sub === undefined) {
    throw new UsageError(`Unknown workspace command "${name}"`, {
      hint:
        "Workspace commands are prepare, list, forget; run 'prompt_runner workspace --help'",
    });
  }
  return await sub(context, rest);
}

/** The `workspace` command. */
export const workspaceCommand: Command = { ...WORKSPACE_INFO, run: workspace };
