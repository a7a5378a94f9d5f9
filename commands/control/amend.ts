/**
 * `prompt_runner control amend` and `control relax`: change what "done"
 * means for a prompt, with a reason and an audit trail.
 *
 * @module
 */

import type { AmendTarget, RelaxOptions } from "../../lib/contract/mod.ts";
import type { AmendmentRecord } from "../../lib/control/mod.ts";
import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import { UsageError } from "../../lib/shared/errors.ts";
import type { CommandContext } from "../_context.ts";
import { WAIT_FLAGS, waitChoice } from "./_wait.ts";
import {
  authorFlag,
  type ControlFlag,
  type ControlInput,
  declareControl,
  type FlagValues,
} from "./_declare.ts";

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

/** What an amendment adds. */
interface Addition {
  clause: string;
  entry: unknown;
}

function addition(values: FlagValues): Addition {
  const given = ["add-file", "add-path", "add-command", "add-contains"].filter(
    (flag) => values[flag] !== undefined,
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
  const value = values[flag] as string;
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

/**
 * Reports a recorded amendment; with `--wait`, also the log entry it was
 * recorded with (with `--json`, only that entry). An amendment is final
 * once recorded: the wait ends at once, applied.
 */
async function recorded(
  context: CommandContext,
  input: ControlInput<unknown>,
  target: AmendTarget,
  record: AmendmentRecord,
): Promise<number> {
  const json = input.values.json === true;
  if (waitChoice(input.values) === null) {
    await report(context, record, json);
    return 0;
  }
  if (!json) await report(context, record, false);
  const { printAmendmentEntry } = await import("./_wait_report.ts");
  await printAmendmentEntry(context, {
    target,
    stateRoot: input.fleet === null ? input.location.state_root : null,
    record,
  }, json);
  return 0;
}

/** An amendment's addition and reason, checked before any file is read. */
function checkAmend(
  { values }: { values: FlagValues },
): Addition & { reason: string } {
  waitChoice(values);
  const { clause, entry } = addition(values);
  const reason = values.reason as string | undefined;
  if (reason === undefined || reason.trim() === "") {
    throw new UsageError("An amendment needs a reason: --reason is mandatory", {
      hint:
        "Say why the contract changes; a missing reason is refused, never defaulted",
    });
  }
  return { clause, entry, reason };
}

async function amendCommand(
  context: CommandContext,
  input: ControlInput<ReturnType<typeof checkAmend>>,
): Promise<number> {
  const { values, words, prepared } = input;
  const author = values.author as string | undefined;
  const { amend } = await import("../../lib/contract/mod.ts");
  const { contractAt } = await import("./_run_at.ts");
  await using at = await contractAt(input);
  const record = await amend(
    at.target,
    words[0]!,
    {
      clause: prepared.clause,
      entries: [prepared.entry],
      reason: prepared.reason,
      persist: values.persist === true,
      ...(author === undefined ? {} : { author }),
    },
  );
  return await recorded(context, input, at.target, record);
}

/** A relaxation's clause, reason and confirmation, checked first. */
function checkRelax({ values }: { values: FlagValues }): RelaxOptions {
  waitChoice(values);
  const clause = values.drop as string | undefined;
  if (clause === undefined) {
    throw new UsageError("Name the clause to drop: --drop CLAUSE", {
      hint:
        "For example: control relax PACKET 01 --drop commands --reason '…' --confirm",
    });
  }
  const author = values.author as string | undefined;
  const options = {
    clause,
    reason: (values.reason as string | undefined) ?? "",
    confirm: values.confirm === true,
    persist: values.persist === true,
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
  return options;
}

async function relaxCommand(
  context: CommandContext,
  input: ControlInput<ReturnType<typeof checkRelax>>,
): Promise<number> {
  const { words, prepared } = input;
  const { relax } = await import("../../lib/contract/mod.ts");
  const { contractAt } = await import("./_run_at.ts");
  await using at = await contractAt(input);
  const record = await relax(at.target, words[0]!, prepared);
  return await recorded(context, input, at.target, record);
}

const TARGETS = `TARGET is a
workspace id (with a packet binding), a packet directory or a state root
(default: the current directory, else the workspace related to it).`;

const REASON: ControlFlag = {
  type: "string",
  arg: "R",
  help: "Why (required; never defaulted)",
};
const PERSIST: ControlFlag = {
  type: "boolean",
  help: "Also write the change into the prompt file",
};
const JSON_FLAG: ControlFlag = {
  type: "boolean",
  help: "Print the amendment record as one JSON line; with --wait,\n" +
    "its log entry instead",
};
const ADDITION = "Addition (exactly one)";
const NOT_RECORDED =
  `  3 packet or prompt not found   4 the amendments file is corrupt, or other
  amendments kept it waiting too long (nothing recorded)

An amendment is final once recorded (no live run is needed): --wait returns
at once, exit 0, printing the log entry it was recorded with.`;

/** `control amend`. */
export const amend = declareControl({
  about:
    `Usage: prompt_runner control amend [TARGET] PROMPT_ID ADDITION --reason R [options]

Adds a requirement to a prompt's verify contract. Amendments live in the
state root, not in the packet: every run from that state root enforces them
(including a verification already under way), and a run from a clean state
root uses the packet's contract. Each is recorded with its phase
(pre_verify, post_failure or post_success) and logged. ${TARGETS}`,
  flags: {
    "add-file": {
      type: "string",
      arg: "PATH",
      help: "files_exist: PATH must exist",
      section: ADDITION,
    },
    "add-path": {
      type: "string",
      arg: "PATH",
      help: "changed_paths_only: PATH may change",
      section: ADDITION,
    },
    "add-command": {
      type: "string",
      arg: '"EXEC ARG"',
      help: "commands: must exit 0 (split into argv, quotes\n" +
        "group words; never run through a shell)",
      section: ADDITION,
    },
    "add-contains": {
      type: "string",
      arg: "PATH=TEXT",
      help: "contains: PATH must contain TEXT",
      section: ADDITION,
    },
    reason: REASON,
    persist: PERSIST,
    author: authorFlag("amends"),
    ...WAIT_FLAGS,
    json: JSON_FLAG,
  },
  footer:
    `Concurrent amend and relax commands take turns; one that waits more than
30 s for the others fails and records nothing.

Exit codes:
  0 recorded   2 usage error (no reason, not exactly one addition, bad entry,
  a bad --timeout)
${NOT_RECORDED}`,
  target: "contract",
  writes: "amendments",
  persist: "persist",
  prepare: checkAmend,
  run: amendCommand,
});

/** `control relax`. */
export const relax = declareControl({
  about:
    `Usage: prompt_runner control relax [TARGET] PROMPT_ID --drop CLAUSE --reason R --confirm [options]

Removes a clause from a prompt's verify contract: the risky direction, so it
needs --confirm and a reason. Recorded, logged and enforced like amend.
Clauses: files_exist, files_absent, contains, matches, commands,
changed_paths_only. TARGET is as for 'control amend'.`,
  flags: {
    drop: { type: "string", arg: "CLAUSE", help: "The clause to remove" },
    reason: REASON,
    confirm: {
      type: "boolean",
      help: "Confirm the contract gets weaker (required)",
    },
    persist: PERSIST,
    author: authorFlag("relaxes"),
    ...WAIT_FLAGS,
    json: JSON_FLAG,
  },
  footer: `Exit codes:
  0 recorded   2 usage error (no --confirm, no reason, unknown clause, a bad
  --timeout)
${NOT_RECORDED}`,
  target: "contract",
  writes: "amendments",
  persist: "persist",
  prepare: checkRelax,
  run: relaxCommand,
});
