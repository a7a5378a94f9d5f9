/**
 * Runs inside tmux: the runner in one pane (a real terminal), a steer from
 * another pane, the first pane read back as rendered text; and the pane a
 * run was started from closed under it, with and without nohup. Each test
 * uses a private tmux server (its own socket directory, no config, a fixed
 * environment) and kills it at the end. Without tmux the tests are skipped,
 * loudly; `.ci/run` installs it.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  cliCommandLine,
  continueRunner,
  killRunner,
  runnerAlive,
  type RunnerProcess,
  runnerState,
  waitForRunner,
} from "../_helpers/detached.ts";
import { waitForSnapshot } from "../_helpers/live_run.ts";
import { ROOT, waitFor } from "../_helpers/run_cli.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";
import { errorText } from "../../lib/shared/errors.ts";

/** tmux's version line, or `null` when tmux is not installed. */
async function tmuxVersion(): Promise<string | null> {
  try {
    const output = await new Deno.Command("tmux", {
      args: ["-V"],
      stdout: "piped",
      stderr: "null",
    }).output();
    return output.success ? new TextDecoder().decode(output.stdout) : null;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

const TMUX = await tmuxVersion();
if (TMUX === null) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      "\n*** WARNING: tmux is not installed: the tmux tests are SKIPPED " +
        "(.ci/run installs it: apt-get install tmux) ***\n\n",
    ),
  );
}

/** A private tmux server, killed (with whatever runs in it) on dispose. */
interface TmuxServer extends AsyncDisposable {
  /** Runs a tmux command on this server and returns its stdout. */
  run(args: string[]): Promise<string>;
  /** A pane's text as rendered, with its scrollback (`-e`: with colours). */
  capture(pane: string, escapes?: boolean): Promise<string>;
}

/**
 * Starts a server on a unique socket in `dir`, with no config, a fixed
 * environment (UTF-8, no NO_COLOR) and a first session of a fixed size
 * running `command` in `dir`. Panes stay after their command ends, to be read.
 */
async function startTmux(dir: string, command: string): Promise<TmuxServer> {
  const socket = `prompt_runner_${crypto.randomUUID().slice(0, 8)}`;
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    USER: "ada",
    LANG: "C.UTF-8",
    TERM: "xterm-256color",
    TMUX_TMPDIR: dir,
  };
  const run = async (args: string[]): Promise<string> => {
    const output = await new Deno.Command("tmux", {
      args: ["-u", "-L", socket, "-f", "/dev/null", ...args],
      cwd: ROOT,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const decoder = new TextDecoder();
    if (!output.success) {
      throw new Error(
        `tmux ${args.join(" ")}: ${decoder.decode(output.stderr)}`,
      );
    }
    return decoder.decode(output.stdout);
  };
  await run([
    "start-server",
    ";",
    "set-option",
    "-g",
    "remain-on-exit",
    "on",
    ";",
    "set-option",
    "-g",
    "default-terminal",
    "screen",
    ";",
    "new-session",
    "-d",
    "-s",
    "main",
    "-x",
    "160",
    "-y",
    "48",
    "-c",
    dir,
    command,
  ]);
  return {
    run,
    capture: (pane, escapes = false) =>
      run([
        "capture-pane",
        "-p",
        ...(escapes ? ["-e"] : []),
        "-S",
        "-",
        "-t",
        pane,
      ]),
    async [Symbol.asyncDispose](): Promise<void> {
      await run(["kill-server"]).catch(() => {});
    },
  };
}

/**
 * A pane command that ends by printing its exit status: the pane's shell
 * waits for the command itself, so the test never depends on tmux reaping
 * it (and tmux, which continues a stopped pane process at once, never sees
 * the command stopped).
 */
function reporting(command: string): string {
  return `${command}; echo "[exit $?]"`;
}

/** Waits for a {@linkcode reporting} command to end and returns its status. */
async function paneEnd(
  tmux: TmuxServer,
  pane: string,
  what: string,
  timeoutMs = 30_000,
): Promise<number> {
  let shown = "";
  try {
    return await waitFor(`${what} to end`, async () => {
      shown = await tmux.capture(pane);
      const status = /^\[exit (\d+)\]$/m.exec(shown)?.[1];
      return status === undefined ? null : Number(status);
    }, timeoutMs);
  } catch (error) {
    throw new Error(`${errorText(error)}; the pane shows:\n${shown}`);
  }
}

Deno.test({
  name:
    "tmux: a run in one pane is steered from another pane; its pane shows the steer and the run's end, in colour",
  ignore: TMUX === null,
  async fn(): Promise<void> {
    await using packet = await makePacket({
      prompts: { "01_long.prompt.md": longPrompt(30, 30) },
    });
    let runner: RunnerProcess | null = null;
    try {
      await using tmux = await startTmux(
        packet.root,
        reporting(
          cliCommandLine(["run", packet.dir, "--log-mode", "compact"]),
        ),
      );
      const runPane = "main:0.0";
      runner = await waitForRunner(packet.stateRoot);
      await waitForSnapshot(
        packet.stateRoot,
        "the run to stream",
        (s) => s.status === "running" && Number(s.tool_count) >= 1,
      );
      await waitFor(
        "the run's first lines in its pane",
        async () => (await tmux.capture(runPane)).includes(">> working on it"),
      );
      // Freeze the runner mid-attempt, so the steer lands before the attempt
      // ends however slowly the steering process starts.
      Deno.kill(runner.pid, "SIGSTOP");
      try {
        const steerPane = (await tmux.run([
          "split-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-t",
          runPane,
          reporting(cliCommandLine([
            "control",
            "steer",
            packet.dir,
            "Keep the notes short",
          ])),
        ])).trim();
        const code = await paneEnd(tmux, steerPane, "the steer command");
        assert.equal(
          await runnerState(runner),
          "T",
          "the runner stayed stopped",
        );
        const shown = await tmux.capture(steerPane);
        assert.equal(code, 0, shown);
        assert.match(
          shown,
          new RegExp(
            `^Queued steer for run ${runner.run_id} \\(request \\S+\\); it is delivered at the next event boundary$`,
            "m",
          ),
        );
      } finally {
        continueRunner(runner);
      }

      const steered = await waitFor(
        "the steer in the run's pane",
        async () => {
          const text = await tmux.capture(runPane);
          return text.includes("msg Steer received") ? text : null;
        },
      );
      assert.match(
        steered,
        /^» steer from ada delivered \(interrupt_and_resume, resume\): Keep the notes short$/m,
      );
      assert.match(
        steered,
        /^msg Steer received: "Keep the notes short"\. Carrying on with the task\.$/m,
      );

      const code = await paneEnd(tmux, runPane, "the run", 60_000);
      const text = await tmux.capture(runPane);
      assert.equal(code, 0, text);
      const lines = text.split("\n").map((l) => l.trimEnd()).filter((l) =>
        l !== "" && !l.startsWith("Pane is dead")
      );
      assert.equal(
        lines[0],
        "▶ 01 Long · attempt 1 (run) · simulated/simulated",
      );
      assert.equal(lines.at(-3), "■ run completed");
      assert.match(lines.at(-2)!, /^--- \d+ events, \d+ tools ---$/);
      assert.equal(lines.at(-1), "[exit 0]");
      // A pane is a terminal: the run coloured its lines.
      const coloured = await tmux.capture(runPane, true);
      assert.ok(coloured.includes("\x1b[36m▶ 01 Long"), coloured);
    } finally {
      if (runner !== null) await killRunner(runner);
    }
  },
});

/**
 * Starts a run from an interactive shell in a pane (`COMMAND &`), then
 * closes that pane the way a dropped ssh connection closes a terminal (the
 * shell gets SIGHUP and passes it on to its jobs), and returns how the run
 * ended.
 */
async function runAndClosePane(
  command: (packetDir: string) => string,
): Promise<{
  status: string;
  nohupOut: string | null;
}> {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": longPrompt(30, 30) },
  });
  let runner: RunnerProcess | null = null;
  try {
    await using tmux = await startTmux(
      packet.root,
      "bash --norc --noprofile -i",
    );
    // A second window keeps the server up once the shell's pane is gone.
    await tmux.run(["new-window", "-d", "-t", "main:1", "cat"]);
    await tmux.run([
      "send-keys",
      "-t",
      "main:0.0",
      "-l",
      `${command(packet.dir)} &`,
    ]);
    await tmux.run(["send-keys", "-t", "main:0.0", "Enter"]);
    runner = await waitForRunner(packet.stateRoot);
    await waitForSnapshot(
      packet.stateRoot,
      "the run to stream",
      (s) => s.status === "running" && Number(s.tool_count) >= 1,
    );
    await tmux.run(["kill-pane", "-t", "main:0.0"]);
    const final = await waitForSnapshot(
      packet.stateRoot,
      "the run to end",
      (s) => s.status !== "running",
    );
    await waitFor(
      "the runner to exit",
      async () => !(await runnerAlive(runner!)),
    );
    let nohupOut: string | null = null;
    try {
      nohupOut = await Deno.readTextFile(join(packet.root, "nohup.out"));
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
    return { status: String(final.status), nohupOut };
  } finally {
    if (runner !== null) await killRunner(runner);
  }
}

Deno.test({
  name:
    "tmux: closing the pane a run was started from (a hangup) ends the run as interrupted",
  ignore: TMUX === null,
  async fn(): Promise<void> {
    const { status, nohupOut } = await runAndClosePane((dir) =>
      cliCommandLine(["run", dir])
    );
    assert.equal(status, "interrupted");
    assert.equal(nohupOut, null);
  },
});

Deno.test({
  name:
    "tmux: a run started with nohup … & keeps running when its pane is closed, completes, and leaves its output in nohup.out",
  ignore: TMUX === null,
  async fn(): Promise<void> {
    const { status, nohupOut } = await runAndClosePane((dir) =>
      `nohup ${cliCommandLine(["run", dir])}`
    );
    assert.equal(status, "completed");
    assert.ok(nohupOut !== null, "nohup wrote nohup.out");
    const lines = nohupOut.trimEnd().split("\n");
    assert.ok(!nohupOut.includes("\x1b"), "no escape codes in a file");
    assert.equal(lines.at(-2), "■ run completed", nohupOut);
    assert.match(lines.at(-1)!, /^--- \d+ events, \d+ tools ---$/);
  },
});
