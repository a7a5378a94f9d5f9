/**
 * What the CLI says about the control commands it keeps here, apart from
 * their code, so that `--help` needs no command's module.
 *
 * @module
 */

import type { CommandInfo } from "../_context.ts";

/** `control status`. */
export const CONTROL_STATUS_INFO: CommandInfo = {
  name: "status",
  summary: "Show a run's live state (the snapshot)",
  help: `Usage: prompt_runner control status [TARGET] [options]

Shows a run's current state: status, prompt, attempt and mode, provider and
model, elapsed time, tool calls, tokens, events, steers, view, and when the
runner last wrote it. Reading never touches the run. TARGET is a workspace
id, a packet directory or a state root (default: the current directory,
else the workspace related to it).

Options:
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print the snapshot as one JSON line
  -h, --help          Show this help

Exit codes:
  0 ok   2 usage error   3 packet or run not found   4 snapshot unreadable
`,
};

/** `control log`. */
export const CONTROL_LOG_INFO: CommandInfo = {
  name: "log",
  summary: "Show the audit log of commands sent to a run",
  help: `Usage: prompt_runner control log [TARGET] [options]

Prints every command sent to a run, with its outcome: applied, accepted
(a steer waiting for its lane), rejected (with the reason) or received.
TARGET is a workspace id, a packet directory or a state root (default: the
current directory, else the workspace related to it).

Options:
  --follow            Keep printing new entries until the run ends
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print entries as NDJSON
  -h, --help          Show this help

Exit codes:
  0 ok   2 usage error   3 packet or run not found
  5 (--follow) the runner is gone without finishing the run
`,
};

/** `control view`. */
export const CONTROL_VIEW_INFO: CommandInfo = {
  name: "view",
  summary: "Change a live run's view (log mode, tool output, thinking, diff)",
  help: `Usage: prompt_runner control view [TARGET] [settings] [options]

Changes how a live run renders, from its next event boundary on. The values
are checked here first; nothing is written for a bad one. TARGET is a
workspace id, a packet directory or a state root (default: the current
directory, else the workspace related to it).

Settings (at least one):
  --log-mode M        compact | verbose | studio
  --tool-output M     none | summary | preview | full
  --thinking M        show | hide
  --diff M            none | stat | full

Options:
  --author NAME       Who asks (default: $USER, else $LOGNAME, else the
                      account name of this process, else uid:N)
  --state-root DIR    The run's state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  -h, --help          Show this help

Exit codes:
  0 the request is queued (see 'prompt_runner control log' for its outcome)
  2 usage error or bad value   3 packet or run not found
  4 the run is not running
`,
};

/** `control contract`. */
export const CONTROL_CONTRACT_INFO: CommandInfo = {
  name: "contract",
  summary: "Show a prompt's contract, its amendments and what is enforced",
  help: `Usage: prompt_runner control contract [TARGET] PROMPT_ID [options]

Shows a prompt's verify contract: its amendments (phase, operation, clause,
author, reason) and the packet's contract against the one every run from
this state root enforces. Kept entries are indented, removed ones start
with "-", added ones with "+". TARGET is a workspace id (with a packet
binding), a packet directory or a state root (default: the current
directory, else the workspace related to it).

Options:
  --state-root DIR    The state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print {prompt_id, packet, enforced, amendments, diff}
  -h, --help          Show this help

Exit codes:
  0 ok   2 usage error   3 packet or prompt not found
  4 an amendments file is corrupt (the message names the line)
`,
};

/** `control amend`. */
export const CONTROL_AMEND_INFO: CommandInfo = {
  name: "amend",
  summary: "Add a requirement to a prompt's contract (needs --reason)",
  help:
    `Usage: prompt_runner control amend [TARGET] PROMPT_ID ADDITION --reason R [options]

Adds a requirement to a prompt's verify contract. Amendments live in the
state root, not in the packet: every run from that state root enforces them
(including a verification already under way), and a run from a clean state
root uses the packet's contract. Each is recorded with its phase
(pre_verify, post_failure or post_success) and logged. TARGET is a
workspace id (with a packet binding), a packet directory or a state root
(default: the current directory, else the workspace related to it).

Addition (exactly one):
  --add-file PATH           files_exist: PATH must exist
  --add-path PATH           changed_paths_only: PATH may change
  --add-command "EXEC ARG"  commands: must exit 0 (split into argv, quotes
                            group words; never run through a shell)
  --add-contains PATH=TEXT  contains: PATH must contain TEXT

Options:
  --reason R          Why (required; never defaulted)
  --persist           Also write the change into the prompt file
  --author NAME       Who amends (default: $USER, else $LOGNAME, else the
                      account name of this process, else uid:N)
  --state-root DIR    The state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print the amendment record as one JSON line
  -h, --help          Show this help

Concurrent amend and relax commands take turns; one that waits more than
30 s for the others fails and records nothing.

Exit codes:
  0 recorded   2 usage error (no reason, not exactly one addition, bad entry)
  3 packet or prompt not found   4 the amendments file is corrupt, or other
  amendments kept it waiting too long (nothing recorded)
`,
};

/** `control relax`. */
export const CONTROL_RELAX_INFO: CommandInfo = {
  name: "relax",
  summary:
    "Drop a clause of a prompt's contract (needs --reason and --confirm)",
  help:
    `Usage: prompt_runner control relax [TARGET] PROMPT_ID --drop CLAUSE --reason R --confirm [options]

Removes a clause from a prompt's verify contract: the risky direction, so it
needs --confirm and a reason. Recorded, logged and enforced like amend.
Clauses: files_exist, files_absent, contains, matches, commands,
changed_paths_only. TARGET is as for 'control amend'.

Options:
  --drop CLAUSE       The clause to remove
  --reason R          Why (required; never defaulted)
  --confirm           Confirm the contract gets weaker (required)
  --persist           Also write the change into the prompt file
  --author NAME       Who relaxes (default: $USER, else $LOGNAME, else the
                      account name of this process, else uid:N)
  --state-root DIR    The state root (default: TARGET/.prompt_runner)
  --workspace FILE    The workspace FILE describes, instead of TARGET
  --packet DIR        With --workspace: the packet, when the file binds none
  --json              Print the amendment record as one JSON line
  -h, --help          Show this help

Exit codes:
  0 recorded   2 usage error (no --confirm, no reason, unknown clause)
  3 packet or prompt not found   4 the amendments file is corrupt, or other
  amendments kept it waiting too long (nothing recorded)
`,
};
