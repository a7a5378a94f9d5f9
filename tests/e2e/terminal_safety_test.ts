/**
 * Text from agents, operators and files is shown, never obeyed: no escape
 * sequence or control character of theirs reaches a terminal, whichever
 * command shows it, while JSON output keeps it byte for byte.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { readJsonl } from "../_helpers/live_run.ts";
import { cliArgs, runCli, spawnCli } from "../_helpers/run_cli.ts";
import { makePacket, promptFile } from "../_helpers/temp_packet.ts";

/** BEL, an OSC that sets the window title, SGR red, an 8-bit CSI, DEL. */
const HOSTILE =
  "alpha\x07beta\x1b]0;title\x07gamma\x1b[31mdelta\x9b2Jepsilon\x7f";
/** What a terminal may show of it. */
const SHOWN = "alphabetagammadeltaepsilon";
const HOSTILE_AUTHOR = "ada\x07\x1b]0;owned\x07\x1b[5m";

/** Control characters a terminal acts on: all of C0 but \n and \t, DEL, C1. */
// deno-lint-ignore no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

function assertNoControls(text: string, where: string): void {
  const found = CONTROL.exec(text);
  assert.equal(
    found,
    null,
    `${where} carries ${JSON.stringify(found?.[0])} at ${found?.index}:\n${
      JSON.stringify(text.slice(Math.max(0, (found?.index ?? 0) - 60)))
    }`,
  );
}

/** A prompt whose simulated session runs long enough to be steered. */
const LONG = promptFile(`simulate:
  attempts:
    - delay_ms: 40
      repeat: 12
      messages: ["working on it"]
      tools: [{name: Bash, input: {command: ls}, output: a.md}]`);

/**
 * Runs a packet, steers it with hostile text from a hostile author, drops in
 * a raw request whose command carries escapes (its refusal quotes it), and
 * returns the run's output once it completed.
 */
async function runSteeredHostile(
  packet: { dir: string; stateRoot: string },
): Promise<string> {
  const runner = spawnCli(["run", packet.dir]);
  const lines = new LineReader(runner.stdout);
  const stderr = readAll(runner.stderr);
  await lines.until((line) => line.startsWith("r+ "));
  const steer = await runCli([
    "control",
    "steer",
    packet.dir,
    HOSTILE,
    "--author",
    HOSTILE_AUTHOR,
  ]);
  assert.equal(steer.code, 0, steer.stderr);
  const snapshot = JSON.parse(
    await Deno.readTextFile(
      join(packet.stateRoot, "control", "snapshot.json"),
    ),
  );
  await Deno.writeTextFile(
    join(packet.stateRoot, "control", "requests", "z-hostile.json"),
    JSON.stringify({
      v: 1,
      id: "z-hostile",
      command: `wipe${HOSTILE}`,
      params: { note: HOSTILE },
      run_id: snapshot.run_id,
      author: HOSTILE_AUTHOR,
      issued_at: "",
    }),
  );
  await lines.rest();
  assert.equal((await runner.status).code, 0, await stderr);
  // The steer reached the agent and the records as it was sent.
  const [intervention] = await readJsonl(
    join(packet.stateRoot, "interventions", "01.jsonl"),
  );
  assert.equal(intervention?.text, HOSTILE);
  assert.equal(intervention?.author, HOSTILE_AUTHOR);
  return lines.seen.join("\n");
}

Deno.test("a steer carrying BEL, OSC, SGR, C1 and DEL is delivered as sent, but the run's output and control events show none of those bytes; control events --json keeps them", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": LONG },
  });
  const output = await runSteeredHostile(packet);
  assertNoControls(output, "the run's output");
  assert.ok(output.includes(`» steer from ada delivered`), output);
  assert.ok(output.includes(SHOWN), output);

  const events = await runCli(["control", "events", packet.dir]);
  assert.equal(events.code, 0, events.stderr);
  assertNoControls(events.stdout, "control events");
  assert.ok(events.stdout.includes(SHOWN), events.stdout);
  // --json prints the stored lines unchanged.
  const json = await runCli(["control", "events", packet.dir, "--json"]);
  assert.equal(
    json.stdout,
    await Deno.readTextFile(join(packet.stateRoot, "control", "events.jsonl")),
  );
});

Deno.test("control log and control status show hostile params, commands, reasons and authors without escapes or controls; control log --json keeps them", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": LONG },
  });
  await runSteeredHostile(packet);
  const log = await runCli(["control", "log", packet.dir]);
  assert.equal(log.code, 0, log.stderr);
  assertNoControls(log.stdout, "control log");
  assert.match(log.stdout, /accepted +steer .* by ada on 01\/1/);
  assert.match(
    log.stdout,
    /rejected +wipealphabetagammadeltaepsilon .* by ada on 01\/1 — unknown command/,
  );
  const logJson = await runCli(["control", "log", packet.dir, "--json"]);
  const entries = logJson.stdout.trim().split("\n").map((l) => JSON.parse(l));
  assert.ok(entries.some((e) => e.author === HOSTILE_AUTHOR));
  assert.ok(entries.some((e) => e.command === `wipe${HOSTILE}`));

  const status = await runCli(["control", "status", packet.dir]);
  assert.equal(status.code, 0, status.stderr);
  assertNoControls(status.stdout, "control status");
});

/** Runs the CLI in a pseudo-terminal (`script`), with colour on. */
function spawnInTerminal(args: string[]): Deno.ChildProcess {
  const argv = [Deno.execPath(), ...cliArgs(args)];
  const quoted = argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`)
    .join(" ");
  return new Deno.Command("script", {
    args: ["-q", "-f", "-e", "-c", quoted, "/dev/null"],
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? "/tmp",
      TERM: "xterm",
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("on a colour terminal a hostile steer shows without its escapes or controls, and only the renderer's own SGR styling remains", async () => {
  await using packet = await makePacket({
    prompts: { "01_long.prompt.md": LONG },
  });
  const runner = spawnInTerminal(["run", packet.dir]);
  const lines = new LineReader(runner.stdout);
  const stderr = readAll(runner.stderr);
  await lines.until((line) => line.startsWith("r+ "));
  const steer = await runCli(["control", "steer", packet.dir, HOSTILE]);
  assert.equal(steer.code, 0, steer.stderr);
  await lines.rest();
  assert.equal((await runner.status).code, 0, await stderr);
  const output = lines.seen.join("\n");
  assert.ok(output.includes("\x1b[33m»"), "colour is on");
  assert.ok(output.includes(SHOWN), JSON.stringify(output));
  // What is left once the renderer's own styling is taken out: text only
  // (a terminal ends its lines with \r\n).
  // deno-lint-ignore no-control-regex
  const unstyled = output.replace(/\x1b\[[0-9;]*m/g, "").replaceAll("\r", "");
  assertNoControls(unstyled, "the run's terminal output");
});

Deno.test("status, control status, the run's output and its error show a hostile packet name, prompt name, model and failure reason safely; --json keeps them", async () => {
  await using packet = await makePacket({
    prompts: {
      "01_evil.prompt.md": promptFile(`name: "Evil\\a\\e]0;pwn\\a\\e[31mName"
recovery: {retry: {max_attempts: 0}, repair: {enabled: false}}
simulate:
  attempts:
    - messages: ["hi\\e[31mred\\a"]
      error: {kind: provider_auth_claim, message: "denied\\a\\e]0;pwn\\a\\e[31mx\\u009b2J"}`),
    },
  });
  const model = "mo\x07del\x1b[2J";
  const run = await runCli(["run", packet.dir, "--model", model]);
  assert.equal(run.code, 1);
  assertNoControls(run.stdout, "the run's output");
  assertNoControls(run.stderr, "the run's stderr");
  assert.match(
    run.stdout,
    /▶ 01 EvilName · attempt 1 \(run\) · simulated\/model/,
  );
  assert.match(
    run.stderr,
    /^error: the run failed: .*provider_auth_claim: deniedx /,
  );

  const status = await runCli(["status", packet.dir]);
  assert.equal(status.code, 0, status.stderr);
  assertNoControls(status.stdout, "status");
  assert.match(status.stdout, /EvilName/);
  assert.match(status.stdout, /provider_auth_claim: deniedx /);
  const statusJson = JSON.parse(
    (await runCli(["status", packet.dir, "--json"])).stdout,
  );
  assert.equal(
    statusJson.progress.current.name,
    "Evil\x07\x1b]0;pwn\x07\x1b[31mName",
  );

  const control = await runCli(["control", "status", packet.dir]);
  assert.equal(control.code, 0, control.stderr);
  assertNoControls(control.stdout, "control status");
  assert.match(control.stdout, /provider +simulated \/ model\n/);
  const controlJson = JSON.parse(
    (await runCli(["control", "status", packet.dir, "--json"])).stdout,
  );
  assert.equal(controlJson.model, model);
});
