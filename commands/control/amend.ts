/**
 * `prompt_runner control amend` and `control relax`: change what "done"
 * means for a prompt, with a reason and an audit trail.
 *
 * @module
 */

import { amend, relax } from "../../lib/contract/mod.ts";
import type { AmendmentRecord } from "../../lib/control/mod.ts";
import { paint, terminalSafe, terminalSafeData } from "../../lib/render/mod.ts";
import { UsageError } from "../../lib/shared/mod.ts";
import { parseCommandArgs, type ParsedArgs, stringFlag } from "../_args.ts";
import { CONTROL_AMEND_INFO, CONTROL_RELAX_INFO } from "./_help.ts";
import type { Command, CommandContext } from "../_context.ts";
import { resolveAmendTarget } from "./_amend_target.ts";
import { WORKSPACE_FLAGS, workspaceFlags } from "./_target.ts";

/** Splits a command line into argv: whitespace separates, quotes group. Never a shell. */
export function splitCommandLine(line: string): string[] {
  const argv: string[] = [];
  let current = "";
  let quote: "'" | '"' | null = null;
  let started = false;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote !== null) {
      if (char === quote) quote = null;
      else if (char === "\\" && quote === '"' && i + 1 < line.length) {
        current += line[++i];
      } else current += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) argv.push(current);
      current = "";
      started = false;
    } else if (char === "\\" && i + 1 < line.length) {
      current += line[++i];
      started = true;
    } else {
      current += char;
      started = true;
    }
  }
  if (quote !== null) {
    throw new UsageError(
      `Invalid --add-command ${JSON.stringify(line)}: a quote is not closed`,
    );
  }
  if (started) argv.push(current);
  return argv;
}

function addition(args: ParsedArgs): { clause: string; entry: unknown } {
  const given = ["add-file", "add-path", "add-command", "add-contains"].filter(
    (flag) => args.values[flag] !== undefined,
  );
  if (given.length !== 1) {
    throw new UsageError(
      given.length === 0
        ? "Name what to add: one of --add-file, --add-path, --add-command, --add-contains"
        : `Give exactly one addition per amend, found ${
          given.map((f) => `--${f}`).join(" and ")
        }`,
      { hint: "Run 'prompt_runner control amend --help'" },
    );
  }
  const flag = given[0]!;
  const value = stringFlag(args, flag)!;
  switch (flag) {
    case "add-file":
      return { clause: "files_exist", entry: value };
    case "add-path":
      return { clause: "changed_paths_only", entry: value };
    case "add-command": {
      const [exec, ...rest] = splitCommandLine(value);
      if (exec === undefined) {
        throw new UsageError("--add-command needs a command to run");
      }
      return {
        clause: "commands",
        entry: rest.length ? { exec, args: rest } : { exec },
      };
    }
    default: {
      const at = value.indexOf("=");
      if (at <= 0 || at === value.length - 1) {
        throw new UsageError(
          `Invalid --add-contains ${JSON.stringify(value)}: expected PATH=TEXT`,
        );
      }
      return {
        clause: "contains",
        entry: { path: value.slice(0, at), text: value.slice(at + 1) },
      };
    }
  }
}

async function report(
  context: CommandContext,
  stored: AmendmentRecord,
  json: boolean,
): Promise<void> {
  if (json) {
    await context.stdout.json(stored);
    return;
  }
  const record = terminalSafeData(stored);
  const what = record.operation === "drop"
    ? `dropped ${record.clause}`
    : `${record.operation === "add" ? "added" : "replaced"} ${record.clause}: ${
      record.entries.map((e) => typeof e === "string" ? e : JSON.stringify(e))
        .join(", ")
    }`;
  const line = paint(
    `${
      record.direction === "add" ? "Amended" : "Relaxed"
    } prompt ${record.prompt} (${record.phase}): ${what}`,
    record.direction === "add" ? "green" : "yellow",
  );
  const note = record.persisted
    ? "The change was also written into the prompt file: commit it."
    : "The change is local to this state root: a run from a clean state root uses the packet's contract.";
  const text = `${line}\n${paint(note, "dim")}\n`;
  await context.stdout.write(terminalSafe(text, { style: context.color }));
}

async function amendCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("control amend", argv, {
    "add-file": { type: "string" },
    "add-path": { type: "string" },
    "add-command": { type: "string" },
    "add-contains": { type: "string" },
    reason: { type: "string" },
    persist: { type: "boolean" },
    author: { type: "string" },
    "state-root": { type: "string" },
    ...WORKSPACE_FLAGS,
    json: { type: "boolean" },
  });
  if (args.values.help) {
    await context.stdout.write(CONTROL_AMEND_INFO.help);
    return 0;
  }
  const { clause, entry } = addition(args);
  const reason = stringFlag(args, "reason");
  if (reason === undefined || reason.trim() === "") {
    throw new UsageError("An amendment needs a reason: --reason is mandatory", {
      hint:
        "Say why the contract changes; a missing reason is refused, never defaulted",
    });
  }
  const { target, promptId } = await resolveAmendTarget(
    "amend",
    args.positionals,
    context.cwd,
    stringFlag(args, "state-root"),
    workspaceFlags(args),
  );
  const author = stringFlag(args, "author");
  const record = await amend(target, promptId, {
    clause,
    entries: [entry],
    reason,
    persist: args.values.persist === true,
    ...(author === undefined ? {} : { author }),
  });
  await report(context, record, args.values.json === true);
  return 0;
}

async function relaxCommand(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("control relax", argv, {
    drop: { type: "string" },
    reason: { type: "string" },
    confirm: { type: "boolean" },
    persist: { type: "boolean" },
    author: { type: "string" },
    "state-root": { type: "string" },
    ...WORKSPACE_FLAGS,
    json: { type: "boolean" },
  });
  if (args.values.help) {
    await context.stdout.write(CONTROL_RELAX_INFO.help);
    return 0;
  }
  const clause = stringFlag(args, "drop");
  if (clause === undefined) {
    throw new UsageError("Name the clause to drop: --drop CLAUSE", {
      hint:
        "For example: control relax PACKET 01 --drop commands --reason '…' --confirm",
    });
  }
  const author = stringFlag(args, "author");
  const options = {
    clause,
    reason: stringFlag(args, "reason") ?? "",
    confirm: args.values.confirm === true,
    persist: args.values.persist === true,
    ...(author === undefined ? {} : { author }),
  };
  if (!options.confirm) {
    // Refuse before touching anything, even a wrong target.
    throw new UsageError(
      "Relaxing a contract needs confirmation: pass --confirm",
      {
        hint:
          "Removing requirements is the risky direction; to add requirements use 'control amend'",
      },
    );
  }
  if (options.reason.trim() === "") {
    throw new UsageError("A relaxation needs a reason: --reason is mandatory", {
      hint:
        "Say why the contract changes; a missing reason is refused, never defaulted",
    });
  }
  const { target, promptId } = await resolveAmendTarget(
    "relax",
    args.positionals,
    context.cwd,
    stringFlag(args, "state-root"),
    workspaceFlags(args),
  );
  const record = await relax(target, promptId, options);
  await report(context, record, args.values.json === true);
  return 0;
}

/** The `control amend` command. */
export const controlAmendCommand: Command = {
  ...CONTROL_AMEND_INFO,
  run: amendCommand,
};

/** The `control relax` command. */
export const controlRelaxCommand: Command = {
  ...CONTROL_RELAX_INFO,
  run: relaxCommand,
};
