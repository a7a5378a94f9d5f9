#!/usr/bin/env bash
# A fake agent CLI (read by the amp parser) that leaves processes behind, as
# $FAKE_LEAVE says, on its first invocation; later invocations (a resumed or
# retried attempt) just finish the turn. Every process it starts appends
# "WHO PID" lines to $FAKE_CLI_DIR/lines.log while it lives, and each
# invocation first appends "start PID", so the file's order tells what ran
# after what. The pid of the process left behind is written to
# $FAKE_CLI_DIR/left.pid.
#
#   setsid        a setsid grandchild, output redirected, outlives a turn
#                 that finishes normally
#   holds_stdout  a grandchild in a session of its own, out of the CLI's
#   holds_stderr  process tree and without PROMPT_RUNNER_AGENT_ID (an agent
#                 that scrubs its tools' environment), keeps the CLI's
#                 stdout (or stderr) open after a turn that finishes normally
#   keeps_running starts a writing setsid child, then never finishes and
#                 ignores SIGTERM and a closed stdout
#   orphan        starts a writing setsid child, then dies at its first write
#                 to a closed stdout (its runner was killed): the child is
#                 left to init
set -u
if [ "${1:-}" = --version ]; then echo "0.0.0-fake"; exit 0; fi
# One line per invocation: the pid, then each argument (newlines as \n)
# after a tab.
{
  printf '%s' "$$"
  for arg in "$@"; do printf '\t%s' "${arg//$'\n'/\\n}"; done
  echo
} >>"$FAKE_CLI_DIR/argv.log"
lines=$FAKE_CLI_DIR/lines.log
left=$FAKE_CLI_DIR/left.pid
echo "start $$" >>"$lines"
id=T-00000000-0000-4000-8000-000000000004
mode=${FAKE_LEAVE:-done}
if [ "$(wc -l <"$FAKE_CLI_DIR/argv.log")" -gt 1 ]; then mode=done; fi

say() { echo "$1" || exit 141; }
init() {
  say '{"type":"system","subtype":"init","session_id":"'$id'","cwd":"'"$PWD"'"}'
}
finish() {
  say '{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Done."}],"usage":{"input_tokens":3,"output_tokens":2}}}'
  say '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Done.","session_id":"'$id'"}'
  exit 0
}
wait_left() {
  while [ ! -s "$left" ]; do sleep 0.01; done
}
tool() {
  say '{"type":"assistant","message":{"id":"t1","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"work"}}]}}'
}
writer() {
  # A child in a session of its own that writes until it is stopped.
  setsid sh -c 'echo $$ >"$1"; while :; do echo "setsid $$" >>"$2"; sleep 0.05; done' \
    sh "$left" "$lines" </dev/null >/dev/null 2>&1 &
  wait_left
}

init
case $mode in
  setsid)
    setsid sh -c 'echo $$ >"$1"; exec sleep 300' sh "$left" \
      </dev/null >/dev/null 2>&1 &
    wait_left
    finish
    ;;
  holds_stdout | holds_stderr)
    # A subshell starts it and exits at once: init adopts it.
    if [ "$mode" = holds_stdout ]; then
      (env -u PROMPT_RUNNER_AGENT_ID setsid sh -c 'echo $$ >"$1"; exec sleep 300' \
        sh "$left" </dev/null 2>/dev/null &)
    else
      (env -u PROMPT_RUNNER_AGENT_ID setsid sh -c 'echo $$ >"$1"; exec sleep 300' \
        sh "$left" </dev/null >/dev/null &)
    fi
    wait_left
    finish
    ;;
  keeps_running)
    writer
    trap '' TERM PIPE
    tool
    while :; do
      echo "agent $$" >>"$lines"
      echo 2>/dev/null
      sleep 0.05
    done
    ;;
  orphan)
    writer
    tool
    while :; do
      echo "agent $$" >>"$lines"
      say ''
      sleep 0.05
    done
    ;;
  *)
    finish
    ;;
esac
