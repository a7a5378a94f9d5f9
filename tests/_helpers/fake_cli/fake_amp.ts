#!/usr/bin/env -S deno run -A --quiet --no-config --no-lock
/**
 * A fake `amp` for tests: it stands in for the real CLI, whose server
 * protocol is proprietary, by replaying the documented `--stream-json`
 * shape from a script of model replies (the `ScriptedReply` shape of
 * `tests/_helpers/model_server/server.ts`).
 *
 * Its state lives in `$FAKE_AMP_DIR`: `script.json` (`{replies, fallback}`),
 * `state.json` (the reply cursor and known threads, shared by every
 * invocation, as a model server's script is), and `argv.jsonl` (one line per
 * invocation: argv, cwd, pid). Like the real CLI it takes `--execute=TEXT`
 * or `-x TEXT`, `--stream-json`, `--stream-json-thinking` (thinking blocks
 * only then), `--dangerously-allow-all`, `-m MODE`, `--model M` and
 * `threads continue T-… ` (same session id), refuses other options, and
 * without `AMP_API_KEY` prints the login flow and waits forever. Tools
 * really run in its cwd (write, edit, shell). SIGINT kills it (no handler,
 * as the real CLI at startup).
 *
 * @module
 */

type Tool =
  | { kind: "write"; path: string; content: string }
  | { kind: "edit"; path: string; old: string; new: string }
  | { kind: "shell"; command: string };

interface Reply {
  thinking?: string;
  text?: string;
  tools?: Tool[];
  usage?: { input_tokens: number; output_tokens: number };
  delay_ms?: number;
  status?: number;
  message?: string;
  hang?: boolean;
  drop?: boolean;
}

interface State {
  next: number;
  threads: string[];
}

const dir = Deno.env.get("FAKE_AMP_DIR");
const encoder = new TextEncoder();
if (!dir) fail("fake amp: FAKE_AMP_DIR is not set", 2);

function out(value: unknown): void {
  Deno.stdout.writeSync(encoder.encode(JSON.stringify(value) + "\n"));
}

function fail(message: string, code = 1): never {
  Deno.stderr.writeSync(encoder.encode(`Error: ${message}\n`));
  Deno.exit(code);
}

function hang(): Promise<never> {
  return new Promise(() => setInterval(() => {}, 60_000));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

if (Deno.args.length === 1 && Deno.args[0] === "--version") {
  Deno.stdout.writeSync(encoder.encode("0.0.0-fake (fake amp)\n"));
  Deno.exit(0);
}

Deno.writeTextFileSync(
  `${dir}/argv.jsonl`,
  JSON.stringify({ argv: Deno.args, cwd: Deno.cwd(), pid: Deno.pid }) + "\n",
  { append: true },
);

// Argument parsing, as strict as the real one for the flags we use.
const args = [...Deno.args];
let resumeId: string | null = null;
if (args[0] === "threads") {
  if (args[1] !== "continue" || !args[2]) fail("fake amp: threads continue ID");
  resumeId = args[2];
  args.splice(0, 3);
}
let prompt: string | null = null;
const flags = new Set<string>();
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if (arg.startsWith("--execute=")) prompt = arg.slice("--execute=".length);
  else if (arg === "-x" || arg === "--execute") {
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith("-")) {
      prompt = next;
      i++;
    }
  } else if (arg === "-m" || arg === "--mode" || arg === "--model") i++;
  else if (
    ["--stream-json", "--stream-json-thinking", "--dangerously-allow-all"]
      .includes(arg)
  ) flags.add(arg);
  else fail(`error: unknown option '${arg}'`);
}
if (!prompt) fail("The --stream-json flag requires --execute mode");
if (!flags.has("--stream-json") && !flags.has("--stream-json-thinking")) {
  fail("fake amp: only --stream-json output is faked");
}

if (!Deno.env.get("AMP_API_KEY")) {
  Deno.stdout.writeSync(encoder.encode(
    "No API key found. Starting login flow...\n" +
      "If your browser does not open automatically, visit:\n\n" +
      "http://127.0.0.1:9/auth/cli-login?authToken=fake\n\n" +
      "When prompted, paste your code here: ",
  ));
  await hang();
}

const statePath = `${dir}/state.json`;
function readState(): State {
  try {
    return JSON.parse(Deno.readTextFileSync(statePath));
  } catch {
    return { next: 0, threads: [] };
  }
}
function writeState(state: State): void {
  Deno.writeTextFileSync(`${statePath}.tmp`, JSON.stringify(state));
  Deno.renameSync(`${statePath}.tmp`, statePath);
}
const script: { replies: Reply[]; fallback?: Reply } = JSON.parse(
  Deno.readTextFileSync(`${dir}/script.json`),
);
/** The next reply; the cursor is saved before the reply plays out. */
function take(): Reply {
  const state = readState();
  const reply = script.replies[state.next];
  if (reply === undefined) return script.fallback ?? { text: "Done." };
  state.next++;
  writeState(state);
  return reply;
}

let sessionId: string;
const state = readState();
if (resumeId !== null) {
  if (
    !/^T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(
      resumeId,
    )
  ) {
    fail(`Invalid thread URL or ID: ${resumeId}`);
  }
  sessionId = resumeId;
} else {
  sessionId = `T-${crypto.randomUUID()}`;
  state.threads.push(sessionId);
  writeState(state);
}
const cwd = Deno.cwd();
const started = Date.now();
const thinking = flags.has("--stream-json-thinking");

out({
  type: "system",
  subtype: "init",
  cwd,
  session_id: sessionId,
  tools: ["Bash", "Edit", "Write", "Read"],
  mcp_servers: [],
});
out({
  type: "user",
  message: { role: "user", content: [{ type: "text", text: prompt }] },
  parent_tool_use_id: null,
  session_id: sessionId,
});

function resolvePath(path: string): string {
  return path.startsWith("/") ? path : `${cwd}/${path}`;
}

function runTool(
  tool: Tool,
): {
  name: string;
  input: Record<string, unknown>;
  run: () => Promise<[string, boolean]>;
} {
  if (tool.kind === "write") {
    const file = resolvePath(tool.path);
    return {
      name: "Write",
      input: { file_path: file, content: tool.content },
      run: async () => {
        await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), {
          recursive: true,
        });
        await Deno.writeTextFile(file, tool.content);
        return [`File created successfully at: ${file}`, false];
      },
    };
  }
  if (tool.kind === "edit") {
    const file = resolvePath(tool.path);
    return {
      name: "Edit",
      input: { file_path: file, old_string: tool.old, new_string: tool.new },
      run: async () => {
        let before: string;
        try {
          before = await Deno.readTextFile(file);
        } catch {
          return [`File does not exist: ${file}`, true];
        }
        if (!before.includes(tool.old)) {
          return [`String to replace not found in file: ${tool.old}`, true];
        }
        await Deno.writeTextFile(file, before.replace(tool.old, tool.new));
        return [`The file ${file} has been updated successfully.`, false];
      },
    };
  }
  return {
    name: "Bash",
    input: { command: tool.command },
    run: async () => {
      const result = await new Deno.Command("bash", {
        args: ["-c", tool.command],
        cwd,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      const decoder = new TextDecoder();
      const text =
        (decoder.decode(result.stdout) + decoder.decode(result.stderr))
          .trimEnd();
      return [
        result.success ? text : `Error: Exit code ${result.code}\n${text}`,
        !result.success,
      ];
    },
  };
}

let turns = 0;
let last = "";
let toolNumber = 0;
for (;;) {
  const reply = take();
  turns++;
  if (reply.delay_ms) await sleep(reply.delay_ms);
  if (reply.hang) await hang();
  if (reply.drop) {
    Deno.stdout.writeSync(
      encoder.encode(`{"type":"assistant","message":{"content":[{"type":"te`),
    );
    fail("Cannot reach Amp servers. Are you offline?");
  }
  if (reply.status !== undefined) {
    if (reply.status === 401) {
      fail("Invalid or missing API key. Run 'amp login' to authenticate.");
    }
    const defaults: Record<number, string> = {
      429: "rate limit exceeded",
      529: "overloaded",
      500: "internal server error",
    };
    out({
      type: "result",
      subtype: "error_during_execution",
      duration_ms: Date.now() - started,
      is_error: true,
      num_turns: turns,
      error: `${reply.status} ${
        reply.message ?? defaults[reply.status] ?? "error"
      }`,
      session_id: sessionId,
    });
    Deno.exit(1);
  }
  const id = `msg_fake_${turns}_${crypto.randomUUID().slice(0, 8)}`;
  const tools = (reply.tools ?? []).map(runTool);
  const message = (content: unknown[]): unknown => ({
    type: "assistant",
    message: {
      type: "message",
      role: "assistant",
      id,
      content,
      stop_reason: tools.length ? "tool_use" : "end_turn",
      usage: reply.usage ?? { input_tokens: 0, output_tokens: 0 },
    },
    parent_tool_use_id: null,
    session_id: sessionId,
  });
  if (reply.thinking && thinking) {
    out(message([{ type: "thinking", thinking: reply.thinking }]));
  }
  if (reply.text) {
    last = reply.text;
    out(message([{ type: "text", text: reply.text }]));
  }
  const ids = tools.map(() => `toolu_fake_${++toolNumber}`);
  tools.forEach((tool, i) => {
    out(
      message([{
        type: "tool_use",
        id: ids[i],
        name: tool.name,
        input: tool.input,
      }]),
    );
  });
  if (!reply.thinking && !reply.text && !tools.length) out(message([]));
  for (const [i, tool] of tools.entries()) {
    const [content, isError] = await tool.run();
    out({
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: ids[i],
          content,
          is_error: isError,
        }],
      },
      parent_tool_use_id: null,
      session_id: sessionId,
    });
  }
  if (!tools.length) break;
}
out({
  type: "result",
  subtype: "success",
  duration_ms: Date.now() - started,
  is_error: false,
  num_turns: turns,
  result: last,
  session_id: sessionId,
});
