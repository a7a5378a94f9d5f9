/**
 * Rendering across processes: a live switch of log mode, and colour only
 * where it belongs.
 */

import assert from "node:assert/strict";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { readSnapshot } from "../_helpers/live_run.ts";
import { cliArgs, runCli, spawnCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

const COUNT = 30;
const names = Array.from(
  { length: COUNT },
  (_, i) => `m${String(i + 1).padStart(2, "0")}`,
);

const SWITCHING = promptFile(`simulate:
  attempts:
    - delay_ms: 60
      messages: [${names.join(", ")}]
      tools:
        - name: Edit
          input: {file_path: a.md, old_string: "old text", new_string: "new text"}
          output: ok`);

Deno.test("control view --log-mode studio --diff full switches a live run: compact before the boundary, studio after, no event twice or lost", async () => {
  await using packet = await makePacket({
    prompts: { "01_talk.prompt.md": SWITCHING },
  });
  const runner = spawnCli(["run", packet.dir]);
  const lines = new LineReader(runner.stdout);
  const stderr = readAll(runner.stderr);
  await lines.until((line) => line === ">> m03");
  const view = await runCli([
    "control",
    "view",
    packet.dir,
    "--log-mode",
    "studio",
    "--diff",
    "full",
  ]);
  assert.equal(view.code, 0, view.stderr);
  const rest = await lines.rest();
  assert.equal((await runner.status).code, 0, await stderr);
  const output = [...lines.seen];
  assert.deepEqual(rest.length > 0, true);
  const compact = output.flatMap((line, i) =>
    /^>> m\d\d$/.test(line) ? [i] : []
  );
  const studio = output.flatMap((line, i) =>
    /^ {2}m\d\d$/.test(line) ? [i] : []
  );
  assert.ok(compact.length >= 3, "rendered compact before the switch");
  assert.ok(studio.length >= 3, "rendered studio after the switch");
  assert.ok(
    Math.max(...compact) < Math.min(...studio),
    "no compact line after the first studio line",
  );
  for (const name of names) {
    const shown = output.filter((line) =>
      line === `>> ${name}` || line === `  ${name}`
    );
    assert.equal(
      shown.length,
      1,
      `${name} rendered once, found ${shown.length}`,
    );
  }
  // After the switch the studio renderer shows the Edit with its patch.
  assert.ok(output.includes("  ✓ Edited a.md  +1 \u22121"), output.join("\n"));
  assert.ok(output.includes("    - old text"));
  assert.ok(output.includes("    + new text"));
  // The compact renderer was dropped, not finished: no footer mid-stream.
  assert.equal(output.filter((line) => line.startsWith("--- ")).length, 0);
  const snapshot = await readSnapshot(packet.stateRoot);
  assert.equal((snapshot!.view as Record<string, string>).log_mode, "studio");
});

async function runWithEnv(
  packetDir: string,
  env: Record<string, string>,
  tty: boolean,
): Promise<string> {
  const argv = [
    Deno.execPath(),
    ...cliArgs(["run", packetDir, "--log-mode", "studio"]),
  ];
  const quoted = argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(
    " ",
  );
  const command = tty
    ? new Deno.Command("script", {
      args: ["-q", "-e", "-c", quoted, "/dev/null"],
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    })
    : new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    });
  const output = await command.output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout);
}

Deno.test("output has no ANSI escapes when stdout is not a terminal or NO_COLOR is set, and colour on a terminal otherwise", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_quick.prompt.md": promptFile(`simulate:
  attempts:
    - messages: [hello]
      tools: [{name: Bash, input: {command: "false"}, output: boom, error: true}]`),
    },
  });
  const base = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
  };
  const piped = await runWithEnv(packet.dir, base, false);
  assert.match(piped, /✗ Command failed: false/);
  assert.ok(!piped.includes("\x1b["), "no escapes into a pipe");
  const ttyNoColor = await runWithEnv(packet.dir, {
    ...base,
    NO_COLOR: "1",
    TERM: "xterm",
  }, true);
  assert.match(ttyNoColor, /Command failed: false/);
  assert.ok(
    !ttyNoColor.includes("\x1b["),
    "no escapes with NO_COLOR on a terminal",
  );
  const tty = await runWithEnv(packet.dir, { ...base, TERM: "xterm" }, true);
  assert.ok(tty.includes("\x1b[31m✗\x1b[0m"), "colour on a terminal");
  // Transcripts never carry escapes, whatever the terminal had.
  for await (const entry of Deno.readDir(`${packet.stateRoot}/logs`)) {
    for await (
      const log of Deno.readDir(`${packet.stateRoot}/logs/${entry.name}`)
    ) {
      const text = await Deno.readTextFile(
        `${packet.stateRoot}/logs/${entry.name}/${log.name}`,
      );
      assert.ok(!text.includes("\x1b["), `escape in ${log.name}`);
    }
  }
});
