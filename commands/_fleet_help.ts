/**
 * The help of `prompt_runner fleet` and its commands.
 *
 * @module
 */

import type { CommandInfo } from "./_context.ts";

const FLEET_OPTIONS =
  `  --fleet URL         The fleet: nats://[user:pass@]host:port[,host:port...]
                      or tls://... (default: $PROMPT_RUNNER_FLEET)
  --fleet-creds FILE  A NATS creds file (default: $PROMPT_RUNNER_FLEET_CREDS)`;

/** `fleet ls --help`. */
export const FLEET_LS_HELP = `Usage: prompt_runner fleet ls --fleet URL [--json]

Lists every run of the fleet: its node, root and run id, packet, status
(running, completed, failed, blocked, interrupted, or unreachable: running,
but the fleet has not heard from it for over 10 s), prompt, attempt and when
the fleet last heard of it. Any of its runs can be named as a TARGET with
fleet:<node>/<root>/<run_id> (or a unique suffix, such as fleet:<run_id>).

Options:
${FLEET_OPTIONS}
  --json              One object per run (NDJSON): {v, key, node, root,
                      run_id, packet, status, prompt_id, attempt, updated_at}
  -h, --help          Show this help

Exit codes:
  0 ok   2 usage error   4 the fleet cannot be reached, or refused the
  credentials

Examples:
  prompt_runner fleet ls --fleet nats://fleet.example:4222
  prompt_runner fleet ls --json | jq -c 'select(.status == "running")'
`;

/** `fleet join --help`. */
export const FLEET_JOIN_HELP =
  `Usage: prompt_runner fleet join [TARGET...] --fleet URL [options]

Joins this machine's runs to the fleet, for runs started without --fleet:
a sidecar bridge publishes each TARGET's current run (its events, audit log,
snapshot and contracts, caught up from where the fleet's copy stops) and
hands the fleet's requests for it to its runner, then the next run started
there, until stopped. TARGET is a workspace id, a packet directory or a state
root (default: the current directory, else the workspace related to it).

Options:
${FLEET_OPTIONS}
  --fleet-node NAME   This machine's name in the fleet (default: the host
                      name)
  --fleet-replicas N  Replicas of the fleet's streams, when this creates them
                      (default 1; 3 on a 3-node cluster)
  --once              Publish each TARGET's current run until it is over,
                      then stop (a run that ended: publish what the fleet
                      lacks, and stop)
  -h, --help          Show this help

Exit codes:
  0 done (--once), or stopped   2 usage error   3 TARGET not found
  130/143 stopped by SIGINT/SIGTERM

Examples:
  prompt_runner fleet join examples/demo --fleet nats://fleet.example:4222
  prompt_runner fleet join examples/demo --once --fleet nats://fleet.example:4222
`;

/** `fleet`. */
export const FLEET_INFO: CommandInfo = {
  name: "fleet",
  summary: "List a fleet's runs, and join this machine's runs to it",
  help: `Usage: prompt_runner fleet COMMAND [options]

A fleet is a NATS JetStream deployment that runs on many machines join, to
be watched and steered from one place: 'run --fleet URL' joins a run as it
starts, every control command, status and serve take a fleet TARGET
(fleet:<node>/<root>/<run_id>) with --fleet URL.

Commands:
  ls     List the fleet's runs
  join   Join this machine's runs (started without --fleet) to the fleet

Run 'prompt_runner fleet COMMAND --help' for a command's options.
`,
};
