/**
 * The `commands` clause: argv commands that must exit 0. A command that
 * cannot run (missing binary, missing directory, timeout) is a fault.
 *
 * @module
 */

import { isAbsolute, resolve } from "node:path";
import {
  type CommandEntry,
  DEFAULT_COMMAND_TIMEOUT_MS,
} from "../packet/contract.ts";
import type { VerifyItem } from "./report.ts";
import { repoOf, type VerifyScope } from "./scope.ts";
import { runProcess } from "../shared/run_process.ts";
import { isDirectory } from "../shared/files.ts";

const OUTPUT_LIMIT = 8 * 1024;

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)
    ? arg
    : `'${arg.replaceAll("'", `'\\''`)}'`;
}

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > OUTPUT_LIMIT
    ? `[truncated: ${trimmed.length - OUTPUT_LIMIT} earlier characters]\n` +
      trimmed.slice(-OUTPUT_LIMIT)
    : trimmed;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function checkCommand(
  entry: CommandEntry,
  scope: VerifyScope,
): Promise<VerifyItem> {
  const root = entry.repo !== undefined ? scope.repos[entry.repo]! : scope.cwd;
  const cwd = resolve(root, entry.cwd ?? ".");
  const argv = [entry.exec, ...(entry.args ?? [])];
  const timeoutMs = entry.timeout_ms ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const repo = entry.repo ?? repoOf(root, scope.repos);
  const base = {
    clause: "commands" as const,
    label: argv.map(shellQuote).join(" "),
    ...(repo === undefined ? {} : { repo }),
    argv,
  };
  if (!(await isDirectory(cwd))) {
    return {
      ...base,
      status: "fault",
      reason: `cannot run: working directory ${cwd} does not exist`,
    };
  }
  let exec = entry.exec;
  if (isAbsolute(exec) && !(await exists(exec))) {
    return {
      ...base,
      status: "fault",
      reason: `cannot run: program ${exec} does not exist`,
    };
  }
  if (exec.includes("/")) {
    exec = resolve(cwd, exec);
    // A missing relative program may be the artifact the prompt should build.
    if (!(await exists(exec))) {
      return {
        ...base,
        status: "fail",
        reason: `program ${entry.exec} does not exist in ${cwd}`,
      };
    }
  }
  const result = await runProcess(exec, {
    args: entry.args ?? [],
    cwd,
    ...(entry.env === undefined ? {} : { env: entry.env }),
    timeoutMs,
  });
  const output = tail(
    [result.stdout, result.stderr].map((s) => s.trim()).filter(Boolean).join(
      "\n",
    ),
  );
  if (result.state === "not_found") {
    return {
      ...base,
      status: "fault",
      reason: `cannot run: ${entry.exec} not found on PATH`,
    };
  }
  if (result.state === "spawn_failed") {
    return {
      ...base,
      status: "fault",
      reason: `cannot run ${entry.exec}: ${result.error}`,
    };
  }
  if (result.state === "timeout") {
    return {
      ...base,
      status: "fault",
      reason: `timed out after ${timeoutMs} ms`,
      output,
    };
  }
  const code = result.code ?? -1;
  if (code !== 0) {
    return {
      ...base,
      status: "fail",
      reason: `exited with code ${code}${output ? `: ${output}` : ""}`,
      exit_code: code,
      output,
    };
  }
  if (
    entry.stdout_contains !== undefined &&
    !`${result.stdout}\n${result.stderr}`.includes(entry.stdout_contains)
  ) {
    return {
      ...base,
      status: "fail",
      reason: `output does not contain ${
        JSON.stringify(entry.stdout_contains)
      }`,
      exit_code: code,
      output,
    };
  }
  return { ...base, status: "pass", reason: "exited 0", exit_code: 0, output };
}

/** Runs each command in turn and checks it exits 0. */
export async function checkCommands(
  entries: CommandEntry[],
  scope: VerifyScope,
): Promise<VerifyItem[]> {
  const items: VerifyItem[] = [];
  for (const entry of entries) items.push(await checkCommand(entry, scope));
  return items;
}
