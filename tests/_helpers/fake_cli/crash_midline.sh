#!/usr/bin/env bash
# A fake agent CLI (read by the amp parser) that dies mid-line: it starts a
# session, writes half a JSON line, says why on stderr and exits 1. Resumed
# (`threads continue ID …`) it ends the same session well, writing
# resumed.txt, unless FAKE_CRASH_ALWAYS=1.
set -u
if [ "${1:-}" = --version ]; then echo "0.0.0-fake"; exit 0; fi
# One line per invocation: the pid, then each argument (newlines as \n)
# after a tab.
{
  printf '%s' "$$"
  for arg in "$@"; do printf '\t%s' "${arg//$'\n'/\\n}"; done
  echo
} >>"$FAKE_CLI_DIR/argv.log"
id=T-00000000-0000-4000-8000-000000000002
echo '{"type":"system","subtype":"init","session_id":"'$id'","cwd":"'"$PWD"'"}'
if [ "${1:-}" = threads ] && [ "${FAKE_CRASH_ALWAYS:-0}" != 1 ]; then
  echo resumed >resumed.txt
  echo '{"type":"assistant","message":{"id":"r1","content":[{"type":"text","text":"Picked up where it stopped."}],"usage":{"input_tokens":3,"output_tokens":2}}}'
  echo '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Picked up where it stopped.","session_id":"'$id'"}'
  exit 0
fi
echo '{"type":"assistant","message":{"id":"c1","content":[{"type":"text","text":"Starting the work."}]}}'
printf '%s' '{"type":"assistant","message":{"id":"c2","content":[{"type":"te'
echo 'fake-cli: stream reset by peer' >&2
echo 'fake-cli: giving up after the crash' >&2
exit 1
