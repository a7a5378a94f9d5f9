import assert from "node:assert/strict";
import { spawnChildLines } from "../../../lib/providers/child_lines.ts";
import { within } from "../../_helpers/run_cli.ts";

/**
 * The state letter and process group of a pid, or null when it is gone.
 * Read by `sh`: Deno itself may not read another process's `/proc` entry.
 */
async function procStat(
  pid: number,
): Promise<{ state: string; pgid: number } | null> {
  const out = await new Deno.Command("sh", {
    args: ["-c", `cat /proc/${pid}/stat 2>/dev/null`],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).output();
  const stat = new TextDecoder().decode(out.stdout);
  if (stat === "") return null;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state: fields[0]!, pgid: Number(fields[2]) };
}

Deno.test("spawnChildLines() reads a real child's stdout as lines, JSON or not, and reports its exit code and stderr's last lines", async () => {
  const child = spawnChildLines("sh", {
    args: [
      "-c",
      'echo \'{"type":"a"}\'; echo "Reading additional input..."; ' +
      "for i in 1 2 3 4 5; do echo err$i >&2; done; " +
      'printf \'{"type":"b"}\'; exit 3',
    ],
    stderrLines: 2,
  });
  const kinds: string[] = [];
  for await (const line of child.json()) {
    kinds.push(
      line.kind === "json" ? (line.value as { type: string }).type : "text",
    );
  }
  const exit = await child.close();
  assert.deepEqual(kinds, ["a", "text", "b"]);
  assert.equal(exit.code, 3);
  assert.equal(exit.signal, null);
  assert.deepEqual(exit.stderr, ["err4", "err5"]);
});

Deno.test("spawnChildLines() puts the child in its own process group", async () => {
  const child = spawnChildLines("sh", {
    args: ["-c", "echo ready; read x"],
    stdin: "piped",
  });
  const lines = child.lines();
  assert.equal((await lines.next()).value?.text, "ready");
  const stat = await procStat(child.pid);
  assert.equal(stat?.pgid, child.pid);
  await child.write("go\n");
  assert.equal((await lines.next()).done, true);
  const exit = await child.close();
  assert.equal(exit.code, 0);
});

Deno.test("spawnChildLines() close() ends the whole process group, grandchildren included, and reports the signal", async () => {
  const child = spawnChildLines("sh", {
    args: ["-c", "sleep 60 & echo $!; sleep 60"],
  });
  const lines = child.lines();
  const grandchild = Number((await lines.next()).value?.text);
  assert.ok(grandchild > 0);
  const exit = await child.close();
  assert.equal(exit.signal, "SIGTERM");
  const deadline = Date.now() + 10_000;
  for (;;) {
    const stat = await procStat(grandchild);
    // Gone, or a zombie waiting for init to reap it: either way, not running.
    if (stat === null || stat.state === "Z") break;
    assert.ok(
      Date.now() < deadline,
      `grandchild ${grandchild} still ${stat.state}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
});

Deno.test("spawnChildLines() feeds a piped stdin, and the child sees end-of-file on closeInput()", async () => {
  const child = spawnChildLines("cat", { stdin: "piped" });
  await child.write('{"type":"user"}\n');
  await child.write("second\n");
  await child.closeInput();
  const lines = await Array.fromAsync(child.lines());
  const exit = await child.close();
  assert.deepEqual(lines.map((l) => l.text), ['{"type":"user"}', "second"]);
  assert.equal(exit.code, 0);
});

Deno.test("spawnChildLines() with a null stdin gives the child end-of-file at once and refuses write()", async () => {
  const child = spawnChildLines("cat");
  const lines = await Array.fromAsync(child.lines());
  await assert.rejects(() => child.write("x"), /not piped/);
  const exit = await child.close();
  assert.deepEqual(lines, []);
  assert.equal(exit.code, 0);
});

Deno.test("spawnChildLines() throws NotFound for a missing executable", () => {
  assert.throws(
    () => spawnChildLines("/nonexistent/agent-cli"),
    Deno.errors.NotFound,
  );
});

Deno.test("spawnChildLines() close() after the output ended lets the child exit on its own, with its own exit code", async () => {
  // The child closes its stdout, then takes a moment to exit: a close()
  // right after the last line must not signal it.
  const child = spawnChildLines("sh", {
    args: ["-c", "echo last; exec >&-; sleep 0.3; exit 3"],
  });
  const lines = await Array.fromAsync(child.lines());
  const exit = await child.close();
  assert.deepEqual(lines.map((l) => l.text), ["last"]);
  assert.equal(exit.code, 3);
  assert.equal(exit.signal, null);
});

for (const held of ["stdout", "stderr"] as const) {
  Deno.test(`spawnChildLines() close() stops reading a ${held} that a grandchild in a session of its own still holds: every read ends`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "prompt_runner_test_" });
    const pidFile = `${dir}/holder.pid`;
    const other = held === "stdout" ? "2>/dev/null" : ">/dev/null";
    const child = spawnChildLines("sh", {
      args: [
        "-c",
        `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 300' </dev/null ${other} & ` +
        `while [ ! -s ${pidFile} ]; do sleep 0.01; done; echo '{"n":1}'`,
      ],
    });
    try {
      const lines = child.lines();
      assert.equal((await lines.next()).value?.text, '{"n":1}');
      const rest = lines.next();
      // The child itself exits; what it left keeps the pipe open.
      await child.status;
      const exit = await within(child.close(200), 10_000, "close() to return");
      assert.equal(exit.code, 0);
      assert.equal(
        (await within(rest, 10_000, "the stdout read to end")).done,
        true,
      );
      await within(child.exit, 10_000, "the stderr read to end");
    } finally {
      const holder = Number(await Deno.readTextFile(pidFile).catch(() => "0"));
      if (holder > 0) {
        try {
          Deno.kill(holder, "SIGKILL");
        } catch {
          // Gone.
        }
      }
      await child.close(200);
      await Deno.remove(dir, { recursive: true });
    }
  });
}
