/**
 * Planning a confined control command: what its worker may touch, and the
 * arguments it runs with.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type ControlPlan,
  planControl,
} from "../../commands/control/_scope.ts";
import type { ControlDeclaration } from "../../commands/control/_declare.ts";
import { amend, relax } from "../../commands/control/amend.ts";
import { status } from "../../commands/control/status.ts";
import { steer } from "../../commands/control/steer.ts";
import { view } from "../../commands/control/view.ts";
import { runConfined } from "../../commands/control/_confined.ts";
import {
  NotFoundError,
  PromptRunnerError,
  UsageError,
} from "../../lib/shared/errors.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { runCli } from "../_helpers/run_cli.ts";
import { Writer } from "../../commands/_output.ts";
import { main } from "../../main.ts";

/** Plans a command and returns the plan (help is not asked for here). */
async function plan(
  name: string,
  declaration: ControlDeclaration<unknown>,
  argv: string[],
  cwd: string,
): Promise<ControlPlan> {
  const planned = await planControl(name, declaration, argv, { cwd });
  assert.notEqual(planned, "help");
  return planned as ControlPlan;
}

Deno.test("planControl() narrows a control command to its state root and packet, with TARGET resolved and its values parsed once", async () => {
  await using packet = await makePacket({ git: false });
  await Deno.mkdir(join(packet.stateRoot, "control"), { recursive: true });
  const shown = await plan("status", status, ["packet", "--json"], packet.root);
  assert.equal(shown.input.location.state_root, packet.stateRoot);
  assert.deepEqual(shown.input.values, { json: true });
  assert.deepEqual(shown.input.words, []);
  assert.deepEqual(
    shown.read.filter((p) => p !== "/etc/passwd"),
    [packet.stateRoot, packet.dir],
  );
  // A reader writes nothing.
  assert.deepEqual(shown.write, []);

  // "-x" is not a steer flag: the planner reports it, and no worker runs.
  await assert.rejects(
    planControl("steer", steer, ["packet", "-x", "y"], { cwd: packet.root }),
    (error: unknown) =>
      error instanceof UsageError && /Unknown option '-x'/.test(error.message),
  );

  const words = await plan(
    "steer",
    steer,
    ["packet", "--", "-1", "more"],
    packet.root,
  );
  assert.equal(words.input.location.state_root, packet.stateRoot);
  assert.deepEqual(words.input.words, ["-1", "more"]);
  assert.equal(words.input.prepared, "-1 more");
  assert.deepEqual(words.write, [packet.stateRoot]);
});

Deno.test("planControl() lets amend --persist write the packet's prompts/ only, and keeps a default state root implicit", async () => {
  await using packet = await makePacket({ git: false });
  const amended = await plan(
    "amend",
    amend,
    ["01", "--add-file", "a.md", "--reason", "why", "--persist"],
    packet.dir,
  );
  assert.deepEqual(amended.write, [
    packet.stateRoot,
    join(packet.dir, "prompts"),
  ]);
  assert.deepEqual(amended.input.words, ["01"]);
  assert.equal(amended.input.location.packet_dir, packet.dir);
  assert.equal(amended.input.location.default_state_root, true);
  assert.deepEqual(amended.input.prepared, {
    clause: "files_exist",
    entry: "a.md",
    reason: "why",
  });
  const other = join(packet.root, "elsewhere");
  const relaxed = await plan(
    "relax",
    relax,
    [
      "packet",
      "01",
      "--drop",
      "commands",
      "--reason",
      "r",
      "--confirm",
      "--state-root",
      "elsewhere",
    ],
    packet.root,
  );
  assert.deepEqual(relaxed.write, [other]);
  assert.equal(relaxed.input.location.state_root, other);
  assert.equal(relaxed.input.location.default_state_root, false);
});

Deno.test("planControl() of a run that cannot be found is refused with the command's not-found error, and nothing runs", async () => {
  const cwd = await Deno.makeTempDir();
  try {
    await assert.rejects(
      planControl("view", view, ["--log-mode", "verbose"], { cwd }),
      NotFoundError,
    );
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

/** A writer over a buffer, or over a reader that has gone away. */
function capture(closed = false): { writer: Writer; text: () => string } {
  const chunks: Uint8Array[] = [];
  const writer = new Writer({
    write(bytes: Uint8Array): Promise<number> {
      if (closed) return Promise.reject(new Deno.errors.BrokenPipe("gone"));
      chunks.push(bytes.slice());
      return Promise.resolve(bytes.length);
    },
  });
  return {
    writer,
    text: () => new TextDecoder().decode(concat(chunks)),
  };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

Deno.test("main() with writers of its own gets a confined control command's output through them, and a closed one ends it with 0", async () => {
  await using packet = await makePacket({
    git: false,
    prompts: { "01_a.prompt.md": longPrompt(2, 0) },
  });
  const ran = await runCli(["run", packet.dir]);
  assert.equal(ran.code, 0, ran.stderr);
  const out = capture();
  const err = capture();
  const code = await main(["control", "status", packet.dir, "--json"], {
    stdout: out.writer,
    stderr: err.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(code, 0, err.text());
  assert.equal(JSON.parse(out.text()).status, "completed");
  assert.equal(err.text(), "");

  const refused = capture();
  const missing = await main(["control", "status", join(packet.root, "nope")], {
    stdout: capture().writer,
    stderr: refused.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(missing, 3);
  assert.match(refused.text(), /^error: Cannot find packet /);

  const gone = capture(true);
  const events = await main(["control", "events", packet.dir, "--json"], {
    stdout: gone.writer,
    stderr: err.writer,
    color: false,
    cwd: packet.root,
  });
  assert.equal(events, 0);
  assert.equal(err.text(), "");
});

Deno.test("a control command whose declaration cannot be planned is refused (exit 70, CANNOT_PLAN), never run with a wider scope", async () => {
  await using packet = await makePacket({ git: false });
  let ran = false;
  const broken = ([
    // A TARGET kind the planner does not know.
    { ...status, target: "fleet" as "location" },
    // A --persist that names no boolean flag: what it may write is unknown.
    { ...status, writes: "amendments", persist: "persist" },
    // A reader that says it rewrites prompts.
    { ...amend, writes: "nothing" },
    // A flag the planner itself owns.
    { ...status, flags: { "state-root": { type: "string", help: "x" } } },
  ] as ControlDeclaration[]).map((declaration): ControlDeclaration => ({
    ...declaration,
    run: () => {
      ran = true;
      return Promise.resolve(0);
    },
  }));
  for (const declaration of broken) {
    await assert.rejects(
      planControl("status", declaration, [packet.dir], { cwd: packet.root }),
      (error: unknown) =>
        error instanceof PromptRunnerError && error.code === "CANNOT_PLAN" &&
        error.exitCode === 70 &&
        /^Cannot plan "control status": .*; it was not run$/.test(
          error.message,
        ),
    );
    const out = capture();
    await assert.rejects(
      runConfined(
        "status",
        declaration,
        new URL("../../commands/control/status.ts", import.meta.url).href,
        {
          stdout: out.writer,
          stderr: out.writer,
          color: false,
          cwd: packet.root,
        },
        [packet.dir],
        () => "",
      ),
      (error: unknown) =>
        error instanceof PromptRunnerError && error.code === "CANNOT_PLAN",
    );
    assert.equal(out.text(), "");
  }
  assert.equal(ran, false);
});
