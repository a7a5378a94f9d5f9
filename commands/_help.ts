/**
 * What the CLI says about the top-level commands it keeps here, apart from
 * their code, so that `--help` needs no command's module.
 *
 * @module
 */

import type { CommandInfo } from "./_context.ts";

/** `run`. */
export const RUN_INFO: CommandInfo = {
  name: "run",
  summary: "Run a packet's prompts, verify and recover",
  help: `Usage: prompt_runner run PACKET [IDS...] [options]
       prompt_runner run WORKSPACE_ID [IDS...] [options]
       prompt_runner run --workspace WORKSPACE_YML [--packet DIR] [IDS...]

Runs a packet's prompts (all of them, or the ids given, in dependency order)
against the packet's provider, verifies each result against its contract,
and retries or repairs as the packet's recovery settings allow. The run can
be watched and steered from another terminal with 'prompt_runner control'.

A workspace run (a prepared workspace's id, or --workspace FILE, which
prepares it) runs the workspace's packet (or --packet DIR) on the
workspace's repo overrides, and keeps everything it writes in the
workspace's state root: nothing is written under the packet's directory.

Options:
  --provider P        Run every prompt on provider P (simulated, ...)
  --model M           Use model M for every prompt
  --log-mode M        compact | verbose | studio
  --tool-output M     none | summary | preview | full
  --thinking M        show | hide
  --diff M            none | stat | full
  --state-root DIR    Keep run state in DIR (default: PACKET/.prompt_runner):
                      a new or empty directory, or one a run made; never
                      one around the packet or a checkout
  --workspace FILE    Run in the workspace FILE describes (see
                      'prompt_runner workspace --help')
  --packet DIR        The packet a workspace runs, instead of its binding
  --resume            Continue the state root's last run under the same run
                      id when it was interrupted (a signal, a closed
                      stdout) or its runner died before finishing it: the
                      prompts it completed are not run again
  --run-id ID         Use this run id: up to 128 letters, digits, '.', '_'
                      and '-' (a resumed run keeps its events, budgets and
                      audit trail)
  --progress-timeout S  A stall is S seconds without an event from the agent
                      while an attempt runs: the run then emits
                      attention_needed (reason stalled) once, and goes on
                      (default: the packet's or prompt's progress_timeout_ms;
                      none)
  --json              Print canonical events as NDJSON instead of text
  -h, --help          Show this help

Fleet (watch and steer it from other machines, DESIGN §12):
  --fleet URL         Publish the run to the fleet at URL
                      (nats://[user:pass@]host:port[,host:port...] or
                      tls://...; default: $PROMPT_RUNNER_FLEET, else the
                      workspace file's fleet:). The run never waits for
                      the fleet: one that is down is warned of once and
                      caught up with when it is back
  --fleet-creds FILE  A NATS creds file (default: $PROMPT_RUNNER_FLEET_CREDS)
  --fleet-node NAME   This machine's name in the fleet (default: the host
                      name)
  --fleet-replicas N  Replicas of the fleet's streams, when this run creates
                      them (default 1; 3 on a 3-node cluster)

Exit codes:
  0 completed   1 the run failed, was blocked or interrupted   2 usage error,
  or a state root that contains the packet, is or holds a checkout, or is a
  directory of files prompt_runner did not make   3 packet, prompt, repo or
  workspace not found (a workspace forgotten as its run starts)   4 another
  run holds the state root, the state root is not usable (a system, shared
  or home directory, another user's, a link, not a directory), or --resume
  names a run that completed, failed or was blocked
  129/130/143 stopped by SIGHUP/SIGINT/SIGTERM (recorded as interrupted;
  continue it with --resume; a run started under nohup ignores SIGHUP)

A full disk or an I/O error stops the run with exit 1 and a message naming
the path; free space, then continue with --resume.

An agent CLI a killed runner left running (with what it started) is stopped
before the run starts anything, and a warning names each process; one that
cannot be stopped refuses the run with exit 4.

The packet's notify: rules (and the workspace file's) run a command or POST
to a webhook when the run needs attention or ends, in the background: a
receiver that is slow, down or failing never slows or fails the run, whose
end waits at most 3 s for the deliveries still under way. Each outcome is a
'notified' entry of 'prompt_runner control log'.

Examples:
  prompt_runner run examples/demo
  prompt_runner run operator-packet
  prompt_runner run examples/demo 02 --log-mode verbose
  prompt_runner run examples/demo --json | jq -c 'select(.type=="prompt_completed")'
  prompt_runner run examples/demo --fleet nats://fleet.example:4222
`,
};

/** `status`. */
export const STATUS_INFO: CommandInfo = {
  name: "status",
  summary: "Show where a packet's newest run stands, in one quiet report",
  help: `Usage: prompt_runner status [TARGET] [options]

Shows the newest run of a state root in one report: the run (id, status,
who started it, elapsed), the selected prompts' progress, the attempt and its
mode, the last verifier result (unmet items named), provider activity (last
event, tokens, cost), steers and amendments, whether the agent CLI's process
and the runner are alive; then one line per prompt of the packet.

The run is "never run", "running", "completed", "failed", "interrupted"
(stopped by a signal), or "runner gone" (its runner stopped without
finishing); an interrupted run and one whose runner is gone continue with
'prompt_runner run TARGET --resume'.

TARGET is a prepared workspace's id, a state root or a packet directory.
Without one: the current directory when it is a packet with local state or a
state root, else the prepared workspace whose packet or repos contain it.

A fleet TARGET (fleet:NODE/ROOT/RUN_ID, or a unique suffix of one such as
fleet:RUN_ID; see 'prompt_runner fleet ls') with --fleet URL reports on a run
of the fleet, read from the fleet alone: the same report and the same --json
object, with the run's fleet address as its target and state root. Its
prompts' lines come from the fleet (the run's events and the prompts of its
packet). Its runner is alive while the fleet hears from it; a run that is
running but that the fleet has not heard from for over 10 s is "runner gone",
and continues with 'prompt_runner run ... --resume' on its own machine.

Options:
  --state-root DIR    Read run state from DIR (default: TARGET/.prompt_runner)
  --workspace FILE    Report on the workspace FILE describes, instead of TARGET
  --packet DIR        The packet of a workspace without a packet binding
  --fleet URL         The fleet a fleet:... TARGET is in
                      (nats://[user:pass@]host:port[,host:port...] or
                      tls://...; default: $PROMPT_RUNNER_FLEET)
  --fleet-creds FILE  A NATS creds file for the fleet (default:
                      $PROMPT_RUNNER_FLEET_CREDS)
  --json              Print the rollup as one JSON object (NDJSON)
  -h, --help          Show this help

Exit codes:
  0 ok (whatever the run's state)   2 usage error (a fleet TARGET that
  several runs match)   3 packet or fleet run not found   4 state
  unreadable, or the fleet cannot be reached or refused the credentials

Examples:
  prompt_runner status examples/demo
  prompt_runner status operator-packet --json | jq .run.status
  prompt_runner status fleet:RUN_ID --fleet nats://fleet.example:4222
`,
};

/** `watch`. */
export const WATCH_INFO: CommandInfo = {
  name: "watch",
  summary: "Guard a run: a sample a second, exit when it needs a person",
  help: `Usage: prompt_runner watch [TARGET] [options]

Prints one sample of the newest run a second (status, prompt, attempt, age
of the last event, tokens, cost, attention) until the run ends or a
requirement breaks, then exits with a stable code and reason, so a CI job or
a cron line can guard an unattended run with one command:

  attention       the run needs a person (attention_needed: a prompt failed
                  for good, a verifier fault, a refused permission, a spent
                  steer or usage budget, a stall)            exit 6
  not_running     the runner is gone, or with --require-running the run
                  is not running (never run, interrupted, ended)  exit 4
  progress_stale  with --progress-timeout S, no event for S seconds while
                  the run runs                                exit 124

A run that completes ends the watch with exit 0. The last sample names the
reason; stderr says it in words. Between samples the watch follows the run's
events, so an attention raised and cleared within a second (a stall the next
event ended) still ends it with exit 6.

TARGET is a prepared workspace's id, a state root or a packet directory, as
for 'prompt_runner status'; a fleet TARGET (fleet:NODE/ROOT/RUN_ID, or a
unique suffix) with --fleet URL is watched from the fleet alone.

Options:
  --progress-timeout S  Exit 124 (progress_stale) when the run's last event
                      is older than S seconds
  --require-running   Exit 4 (not_running) unless the run is running
  --state-root DIR    Read run state from DIR (default: TARGET/.prompt_runner)
  --workspace FILE    Watch the workspace FILE describes, instead of TARGET
  --packet DIR        The packet of a workspace without a packet binding
  --fleet URL         The fleet a fleet:... TARGET is in (default:
                      $PROMPT_RUNNER_FLEET)
  --fleet-creds FILE  A NATS creds file for the fleet
  --json              Print each sample as one JSON object (NDJSON); the
                      last one carries "violation": {reason, detail}
  -h, --help          Show this help

Exit codes:
  0 the run completed   2 usage error   3 target not found
  4 not_running   6 attention   124 progress_stale   130 interrupted (Ctrl-C)

Examples:
  prompt_runner watch examples/demo --require-running --progress-timeout 600
  prompt_runner watch operator-packet --json | jq -c .attention
`,
};

/** `workspace`. */
export const WORKSPACE_INFO: CommandInfo = {
  name: "workspace",
  summary: "Prepare, list and forget operator workspaces",
  help: `Usage: prompt_runner workspace COMMAND [options]

A workspace runs a packet without writing into the packet's directory: its
run state, steers, interventions and amendments live in a state root of the
operator's (default: $XDG_STATE_HOME/prompt_runner/workspaces/ID, else
~/.local/state/prompt_runner/workspaces/ID), and its repos can point at the
operator's own checkouts. It is described by a workspace.yml:

  id: operator-packet        # [a-z0-9][a-z0-9._-]{0,63}
  packet: ../packets/demo    # optional default packet (relative to the file)
  repos:                     # optional repo overrides (relative to the file)
    app: /srv/checkouts/app
  state_root: /var/lib/pr/x  # optional: a new or empty directory

Relative paths are relative to the file; a symlinked workspace.yml's, to
the file it links to. A state root is prompt_runner's alone: it never
contains the packet, a checkout or another workspace's state root, and
never lies inside one.

Once prepared, the id is a TARGET for run, status and every control
command; with no TARGET, a command run inside the workspace's packet or
one of its repos finds the workspace.

Commands:
  prepare WORKSPACE_YML   Create and tag the state root, register the id
  list [--json]           Show the prepared workspaces and their last run
  forget ID [--delete]    Unregister the id (--delete also deletes what
                          prompt_runner made in its state root: every run
                          recorded there; anything else is kept)

Run 'prompt_runner workspace COMMAND --help' for a command's options.

Exit codes:
  0 ok   2 usage error or invalid workspace file   3 workspace file, packet,
  repo or id not found   4 refused by state (another workspace's state root,
  one inside or around it, a system, shared or home directory, a run still
  using it)
`,
};

/** `serve`. */
export const SERVE_INFO: CommandInfo = {
  name: "serve",
  summary: "Serve a live web dashboard of runs, to watch and steer them",
  help: `Usage: prompt_runner serve [TARGET...] [options]

Serves a web dashboard of the runs of each TARGET (a prepared workspace's
id, a state root or a packet directory; without one: the prepared
workspaces and the current directory's packet): a runs page that updates
live, and a page per run with its snapshot, timeline, event stream, control
log and contract, and forms to steer it, change its view, and amend or
relax its contract. New runs of those targets appear as they start. The
dashboard uses the same client API as the CLI and has no other powers: each
action runs in a worker confined to its run as the control command is.

With --fleet URL (or PROMPT_RUNNER_FLEET) it shows the runs of a fleet
(runs on many machines that publish to NATS JetStream, see 'prompt_runner
fleet --help'): every run of the fleet, one row each (its target
fleet:NODE/ROOT/RUN_ID; status unreachable when it runs but the fleet has
not heard from it for 10 s), new ones as they start, with the same run
pages, streams and actions as local runs. A fleet run's actions go through
the fleet, each in a worker that may reach the fleet's servers and read no
file but the creds. Fleet TARGETs (fleet:NODE/ROOT/RUN_ID, or a unique
suffix of one) show only those runs. Local TARGETs named as well are shown
beside the fleet's; without one, no local run is (this machine's runs in
the fleet are among its runs). The URL's password or token is never shown:
pages, warnings and errors show it masked (nats://user:***@host:port). A
fleet that cannot be reached at start is an error (exit 4); one lost later
is warned about (once, until it answers again), its runs show as last read,
and a run page says it does not answer (503).

The first line on stdout is the URL to open, with a random access token:
  dashboard: http://HOST:PORT/?token=TOKEN
and a line like it follows for each other origin it answers at: on
127.0.0.1 (the default) also localhost and [::1] (it listens on both
loopbacks); on 0.0.0.0 or :: also this machine's addresses and host name;
and each --origin. A request whose Host is none of those is refused (403),
so a page on another site cannot reach it through a rebound name. Every
request needs the token (the URL's, then a cookie named pr_token_PORT);
writes are POST only, from one of those origins. The token is new at every
start, unless PROMPT_RUNNER_SERVE_TOKEN gives one (at least 32 characters
of A-Z a-z 0-9 - _): a dashboard restarted with the token and port it had
keeps its open pages streaming where they were.

Limits, so no client can take it down: at most 256 connections (a new one
closes the one that has waited longest for a request, once that one has
waited 1 s, so a client that sends its request at once is always read;
when every one is busy, it is answered 503); a request's head must arrive within 10 s and
be at most 32 KiB (431), its body within 60 s with no 10 s pause; a
kept-alive connection is closed after 10 s without a request, and one
whose client reads nothing for 30 s. A form is at most 256 KiB (a view
change 16 KiB): a larger one is refused with 413 as soon as it passes that,
before a byte of it when its length says so. Out of open files, it closes
the connections that wait longest and goes on.

Options:
  --host H            Listen on H (default: 127.0.0.1; any other address is
                      reachable by others and is warned about)
  --port P            Listen on port P (default: 0, any free port)
  --origin URL        Also answer as URL (http[s]://HOST[:PORT], e.g. a
                      reverse proxy's public name); repeatable
  --author NAME       Record web actions as web:NAME (default: $USER, else
                      $LOGNAME, else the account name, else uid:N)
  --fleet URL         Also show the runs of this fleet
                      (nats://[user:pass@]host:port[,host:port…] or
                      tls://…; default: $PROMPT_RUNNER_FLEET)
  --fleet-creds FILE  A NATS creds file for the fleet (default:
                      $PROMPT_RUNNER_FLEET_CREDS)
  -h, --help          Show this help

Stop it with Ctrl-C (exit 130) or SIGTERM (exit 143).

Exit codes:
  2 usage error (a bad flag, a port in use)   3 a TARGET not found
  4 the fleet cannot be reached   130/143 stopped by SIGINT/SIGTERM

Examples:
  prompt_runner serve examples/demo
  prompt_runner serve operator-packet --port 8080
  prompt_runner serve --host 0.0.0.0 --port 8080 --origin https://runs.example.com
  prompt_runner serve --fleet nats://ops:PASSWORD@nats1:4222,nats2:4222
`,
};
