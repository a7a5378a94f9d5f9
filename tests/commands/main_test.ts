import assert from "node:assert/strict";
import { runCli } from "../_helpers/run_cli.ts";

Deno.test("prompt_runner --help prints the commands and exit codes on stdout", async () => {
  const result = await runCli(["--help"]);
  assert.equal(result.code, 0);
  assert.match(result.stdout, /Usage: prompt_runner COMMAND/);
  assert.match(result.stdout, /\brun\b.*\n.*\bstatus\b/);
  assert.match(result.stdout, /Exit codes:/);
  assert.equal(result.stderr, "");
});

Deno.test("prompt_runner with no command prints usage on stderr and exits 2", async () => {
  const result = await runCli([]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(result.stderr, /Usage: prompt_runner COMMAND/);
});

Deno.test("prompt_runner with an unknown command exits 2 and lists the commands", async () => {
  const result = await runCli(["frobnicate"]);
  assert.equal(result.code, 2);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^error: Unknown command "frobnicate"\nhint: Commands are run, status/,
  );
});

Deno.test("an error quoting hostile input shows it on stderr without escape sequences or controls", async () => {
  const result = await runCli(["frob\x07\x1b]0;owned\x07\x1b[31mnicate\x9b2J"]);
  assert.equal(result.code, 2);
  assert.equal(
    result.stderr.split("\n")[0],
    'error: Unknown command "frobnicate"',
  );
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(result.stderr, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/);
});

Deno.test("prompt_runner --version prints the version from deno.json", async () => {
  const config = JSON.parse(
    await Deno.readTextFile(new URL("../../deno.json", import.meta.url)),
  );
  const result = await runCli(["--version"]);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `prompt_runner ${config.version}\n`);
});

for (const command of ["run", "status"]) {
  Deno.test(`prompt_runner ${command} --help prints usage and exit codes, exit 0`, async () => {
    const result = await runCli([command, "--help"]);
    assert.equal(result.code, 0);
    assert.match(result.stdout, new RegExp(`^Usage: prompt_runner ${command}`));
    assert.match(result.stdout, /Exit codes:/);
    assert.equal(result.stderr, "");
  });
}
