#!/usr/bin/env bash
# A fake agent CLI (read by the amp parser) whose stream never ends: it
# ignores SIGINT and SIGTERM, prints init, starts a child `sleep` (a
# grandchild of the runner, so a leftover would show) and waits forever.
# Only SIGKILL to its process group ends both.
set -u
if [ "${1:-}" = --version ]; then echo "0.0.0-fake"; exit 0; fi
trap '' INT TERM
# One line per invocation: the pid, then each argument (newlines as \n)
# after a tab.
{
  printf '%s' "$$"
  for arg in "$@"; do printf '\t%s' "${arg//$'\n'/\\n}"; done
  echo
} >>"$FAKE_CLI_DIR/argv.log"
echo '{"type":"system","subtype":"init","session_id":"T-00000000-0000-4000-8000-000000000003","cwd":"'"$PWD"'"}'
sleep 86400 &
echo "$!" >>"$FAKE_CLI_DIR/children.log"
while :; do wait; sleep 86400; done
