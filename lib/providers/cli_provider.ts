/**
 * A provider made of an agent CLI's profile: finds the binary, builds the
 * environment, writes the argv (secrets masked) and the CLI's version at the
 * top of the attempt's transcript, and starts or resumes a
 * {@linkcode CliSession}.
 *
 * @module
 */

import type { CliInvocation, CliProfile } from "./cli_profile.ts";
import { CliSession } from "./cli_session.ts";
import { runProcess } from "../shared/run_process.ts";
import type {
  Provider,
  ResumeRequest,
  SessionMeta,
  SessionRequest,
} from "./provider.ts";
import { errorText } from "../shared/errors.ts";

/**
 * The longest single argument Linux takes (`MAX_ARG_STRLEN`, 32 pages):
 * a longer prompt cannot go on a CLI's argv.
 */
const MAX_ARG_BYTES = 128 * 1024;

/** How long `--version` may take. */
const VERSION_TIMEOUT_MS = 15_000;

const SECRET_NAME = /key|token|secret|password|credential|auth/i;

/**
 * The argv as a transcript shows it: each argument quoted when it needs to
 * be, and secrets masked (a value after a flag or in a `name=value` pair
 * whose name looks secret, and any value of a secret-looking variable).
 *
 * @example Usage
 * ```ts
 * import { maskedArgv } from "./cli_provider.ts";
 * import assert from "node:assert/strict";
 *
 * assert.equal(
 *   maskedArgv("codex", ["-c", "api_key=abc", "hi there"], {}),
 *   "codex -c 'api_key=***' 'hi there'",
 * );
 * ```
 */
export function maskedArgv(
  bin: string,
  args: string[],
  env: Record<string, string>,
): string {
  const secrets = Object.entries(env)
    .filter(([name, value]) => SECRET_NAME.test(name) && value.length >= 6)
    .map(([, value]) => value);
  const out = [bin];
  for (let i = 0; i < args.length; i++) {
    let arg = args[i]!;
    const previous = args[i - 1] ?? "";
    if (previous.startsWith("-") && SECRET_NAME.test(previous)) arg = "***";
    const pair = /^([^=\s]+)=(.*)$/s.exec(arg);
    if (pair && SECRET_NAME.test(pair[1]!)) arg = `${pair[1]}=***`;
    for (const secret of secrets) arg = arg.replaceAll(secret, "***");
    out.push(quote(arg));
  }
  return out.join(" ");
}

function quote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

const versions = new Map<string, Promise<string | null>>();

/** The CLI's `--version` line (once per binary per process), or `null`. */
function cliVersion(
  bin: string,
  env: Record<string, string>,
  cwd: string,
): Promise<string | null> {
  let version = versions.get(bin);
  if (version === undefined) {
    version = (async () => {
      // Never a pipe read that outlives it: a process `--version` left
      // behind holding its output is not waited for.
      const result = await runProcess(bin, {
        args: ["--version"],
        env,
        cwd,
        timeoutMs: VERSION_TIMEOUT_MS,
        maxBytes: 64 * 1024,
      });
      if (result.state !== "exited") return null;
      const line = result.stdout.split("\n")[0]?.trim();
      return line ? line.slice(0, 200) : null;
    })();
    versions.set(bin, version);
  }
  return version;
}

/** The binary a prompt runs: `agent.bin`, else `$PROMPT_RUNNER_<NAME>_BIN`, else the name on `PATH`. */
export function cliBinary(
  profile: { name: string; binName: string | null },
  request: SessionRequest,
): {
  bin: string;
  from: string;
} {
  if (request.agent.bin !== null) {
    return { bin: request.agent.bin, from: "agent.bin" };
  }
  const variable = `PROMPT_RUNNER_${profile.name.toUpperCase()}_BIN`;
  const fromEnv = Deno.env.get(variable);
  if (fromEnv) return { bin: fromEnv, from: `$${variable}` };
  if (profile.binName === null) {
    throw new Error(
      `the ${profile.name} provider names no agent to run: set agent.bin (e.g. the path of an ACP agent) or $${variable}`,
    );
  }
  return { bin: profile.binName, from: "PATH" };
}

/** An agent CLI ready to spawn: where it is, its environment and version. */
export interface AgentLaunch {
  /** The executable. */
  bin: string;
  /** Where the executable came from (`agent.bin`, `$VAR`, `PATH`). */
  from: string;
  /** Its whole environment. */
  env: Record<string, string>;
  /** Its `--version` line, or `null`. */
  version: string | null;
}

/**
 * Finds an agent CLI, builds its environment (the runner's, the profile's,
 * `agent.env`, the attempt's `TMPDIR`), and writes the argv (secrets
 * masked), the version and the lane at the top of the attempt's transcript.
 *
 * @throws {Error} when the provider names no binary at all.
 */
export async function prepareAgentLaunch(
  profile: { name: string; binName: string | null },
  request: SessionRequest,
  options: { args: string[]; env: Record<string, string>; steerLane: string },
): Promise<AgentLaunch> {
  const { bin, from } = cliBinary(profile, request);
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    ...options.env,
    ...request.agent.env,
    ...(request.tmpdir === null ? {} : { TMPDIR: request.tmpdir }),
  };
  const version = await cliVersion(bin, env, request.cwd);
  const note = (text: string): void => request.note?.(text);
  note(`[prompt_runner] $ ${maskedArgv(bin, options.args, env)}`);
  note(
    `[prompt_runner] ${profile.name} ${
      version ?? "(version unknown)"
    } from ${from}; cwd ${request.cwd}${
      request.tmpdir === null ? "" : `; TMPDIR ${request.tmpdir}`
    }; lane ${options.steerLane}`,
  );
  return { bin, from, env, version };
}

/**
 * The error a failed spawn of an agent CLI is reported as: a missing binary
 * names where it was looked for and how to point at it.
 */
export function spawnError(
  name: string,
  launch: Pick<AgentLaunch, "bin" | "from">,
  error: unknown,
): unknown {
  const { bin, from } = launch;
  if (error instanceof Deno.errors.NotFound) {
    return new Error(
      `the ${name} CLI was not found (${
        from === "PATH" ? `"${bin}" is not on PATH` : `${from} is "${bin}"`
      }); install it, or set agent.bin or $PROMPT_RUNNER_${name.toUpperCase()}_BIN`,
    );
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return new Error(
      `cannot run the ${name} CLI "${bin}": ${errorText(error)}`,
    );
  }
  return error;
}

/**
 * A provider driving the CLI a profile describes.
 *
 * @example Usage
 * ```ts
 * import { createCliProvider } from "./cli_provider.ts";
 * import { claudeProfile } from "./claude.ts";
 * import assert from "node:assert/strict";
 *
 * if (claudeProfile !== null) {
 *   assert.equal(createCliProvider(claudeProfile).name, "claude");
 * }
 * ```
 */
export function createCliProvider(profile: CliProfile): Provider {
  const launch = async (
    request: SessionRequest,
    sessionId: string | null,
  ): Promise<CliSession> => {
    const liveInput = request.agent.steer_lane !== "resume" &&
      profile.input !== undefined &&
      profile.liveInput(request.agent, request.max_steers);
    const invocation: CliInvocation = {
      text: request.text,
      cwd: request.cwd,
      model: request.model,
      options: request.agent,
      liveInput,
      ...(request.max_budget_usd === undefined
        ? {}
        : { maxBudgetUsd: request.max_budget_usd }),
    };
    const args = sessionId === null
      ? profile.startArgs(invocation)
      : profile.resumeArgs(invocation, sessionId);
    const longest = Math.max(
      0,
      ...args.map((arg) => new TextEncoder().encode(arg).length),
    );
    if (longest >= MAX_ARG_BYTES) {
      throw new Error(
        `the prompt is ${
          Math.ceil(longest / 1024)
        } KiB, too long for the ${profile.name} CLI's command line (at most ${
          MAX_ARG_BYTES / 1024 - 1
        } KiB per argument): shorten it, or move the bulk into a file the prompt names`,
      );
    }
    const launched = await prepareAgentLaunch(profile, request, {
      args,
      env: profile.env?.(invocation) ?? {},
      steerLane: liveInput ? "send_input" : "interrupt_and_resume",
    });
    const meta: SessionMeta = {
      provider: profile.name,
      session_id: sessionId ?? "",
      model: request.model ?? profile.defaultModel,
    };
    try {
      return new CliSession({
        profile,
        bin: launched.bin,
        args,
        env: launched.env,
        cwd: request.cwd,
        input: liveInput ? profile.input!.prompt(request.text) : null,
        meta,
        version: launched.version,
        note: (text: string): void => request.note?.(text),
        signal: request.signal,
      });
    } catch (error) {
      throw spawnError(profile.name, launched, error);
    }
  };
  return {
    name: profile.name,
    defaultModel: profile.defaultModel,
    start: (request) => launch(request, null),
    resume: (meta: SessionMeta, request: ResumeRequest) => {
      if (!meta.session_id) {
        return Promise.reject(
          new Error(
            `the ${profile.name} CLI never reported its session id: resuming would start a fresh session`,
          ),
        );
      }
      return launch(request, meta.session_id);
    },
  };
}
