#!/usr/bin/env -S deno run --unstable-worker-options --allow-read --allow-write --allow-run --allow-env --allow-sys=hostname,uid
/**
 * `deno task demo`: rebuilds the demo's git workspace from its seed, then
 * runs the demo packet. Extra arguments go to `prompt_runner run`.
 *
 * @module
 */

// deno-lint-ignore-file no-console

import { join, relative } from "node:path";
import { CLI_PERMISSIONS as PERMISSIONS } from "./permissions.ts";

const ROOT = join(import.meta.dirname!, "..");
const PACKET = join(ROOT, "examples", "demo");
const SEED = join(PACKET, "seed");
const WORKSPACE = join(PACKET, "workspace");

async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isDirectory) await copyTree(source, target);
    else await Deno.copyFile(source, target);
  }
}

async function git(args: string[]): Promise<void> {
  const result = await new Deno.Command("git", {
    args,
    cwd: WORKSPACE,
    env: {
      GIT_AUTHOR_NAME: "prompt_runner demo",
      GIT_AUTHOR_EMAIL: "demo@prompt-runner.invalid",
      GIT_COMMITTER_NAME: "prompt_runner demo",
      GIT_COMMITTER_EMAIL: "demo@prompt-runner.invalid",
    },
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!result.success) {
    throw new Error(
      `git ${args.join(" ")} failed: ${
        new TextDecoder().decode(result.stderr)
      }`,
    );
  }
}

async function prepareWorkspace(): Promise<void> {
  await Deno.remove(WORKSPACE, { recursive: true }).catch((error) => {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  });
  await copyTree(SEED, WORKSPACE);
  await git(["init", "--quiet", "--initial-branch=main"]);
  await git(["add", "--all"]);
  await git(["commit", "--quiet", "--message", "Seed the demo workspace"]);
}

async function isDemoRunning(): Promise<boolean> {
  const child = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...PERMISSIONS,
      join(ROOT, "main.ts"),
      "status",
      PACKET,
      "--json",
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  if (!child.success) return false;
  try {
    const status = JSON.parse(new TextDecoder().decode(child.stdout));
    return status.run?.status === "running";
  } catch {
    return false;
  }
}

async function demo(): Promise<number> {
  const shown = relative(Deno.cwd(), PACKET) || ".";
  if (await isDemoRunning()) {
    console.error(
      `error: a demo run is already running in ${shown}; wait for it or stop it`,
    );
    return 4;
  }
  await prepareWorkspace();
  console.error(`Demo workspace rebuilt: ${relative(Deno.cwd(), WORKSPACE)}`);
  console.error(
    [
      "Watch and steer it from a second terminal:",
      `  deno task prompt_runner control status ${shown}`,
      `  deno task prompt_runner control events ${shown} --from current`,
      `  deno task prompt_runner control steer ${shown} "Keep the notes short"`,
      `  deno task prompt_runner control view ${shown} --log-mode verbose`,
    ].join("\n"),
  );
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...PERMISSIONS,
      join(ROOT, "main.ts"),
      "run",
      PACKET,
      ...Deno.args,
    ],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  // The child gets Ctrl-C too and ends its run cleanly; wait for it.
  const ignore = (): void => {};
  Deno.addSignalListener("SIGINT", ignore);
  Deno.addSignalListener("SIGTERM", ignore);
  try {
    return (await child.status).code;
  } finally {
    Deno.removeSignalListener("SIGINT", ignore);
    Deno.removeSignalListener("SIGTERM", ignore);
  }
}

if (import.meta.main) {
  Deno.exitCode = await demo();
}
