#!/usr/bin/env bash
# A fake agent CLI (read by the amp parser) whose stdout is hostile: lines
# that are not JSON, JSON that is not an object, unknown types, fields of the
# wrong type, bytes that are not UTF-8 and a 2 MiB line, around a valid
# session that writes garbage_ok.txt and ends with a successful result.
set -u
if [ "${1:-}" = --version ]; then echo "0.0.0-fake"; exit 0; fi
# One line per invocation: the pid, then each argument (newlines as \n)
# after a tab.
{
  printf '%s' "$$"
  for arg in "$@"; do printf '\t%s' "${arg//$'\n'/\\n}"; done
  echo
} >>"$FAKE_CLI_DIR/argv.log"
id=T-00000000-0000-4000-8000-000000000001
echo '{"type":"system","subtype":"init","session_id":"'$id'","cwd":"'"$PWD"'"}'
echo 'this line is not JSON at all'
echo '{"type":"assistant","message":{"content":[{"type":"text","text":"unterminated'
echo '[1, 2, 3]'
echo '"a bare string"'
echo 'null'
echo '{"type":"no_such_type","data":{"x":1}}'
echo '{"type":42}'
echo '{"type":"system","subtype":"init","session_id":{"nested":true}}'
echo '{"type":"assistant","message":"not an object"}'
echo '{"type":"assistant","message":{"content":"not an array","usage":{"input_tokens":"many","output_tokens":-5}}}'
echo '{"type":"assistant","message":{"content":[null,7,{"type":"text","text":42},{"type":"tool_use","id":7,"name":null,"input":"x"},{"type":"thinking","thinking":[]}]}}'
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":{},"content":5},{"type":"tool_result"}]}}'
echo '{"type":"result","subtype":"success","is_error":"yes"'
printf '\xff\xfe\xfd not UTF-8 \xc3\x28\n'
head -c 2097152 /dev/zero | tr '\0' 'x'
echo
echo '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"toolu_g1","name":"Bash","input":{"command":"echo ok > garbage_ok.txt"}}],"usage":{"input_tokens":10,"output_tokens":5}}}'
echo ok >garbage_ok.txt
echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_g1","content":[{"type":"text","text":""}],"is_error":false}]}}'
echo '{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Survived the garbage."}],"usage":{"input_tokens":20,"output_tokens":7}}}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"Survived the garbage.","session_id":"'$id'"}'
