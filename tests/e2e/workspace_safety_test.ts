/**
 * Workspace and state-root safety across real processes: a state root never
 * swallows the packet, a checkout or an operator's directory; prompt_runner
 * never changes the mode of a directory it did not make; registered roots
 * never nest; `forget --delete` deletes only what prompt_runner made; a run
 * racing `forget --delete` never carries on in a re-created root.
 *
 * Nothing here touches `/` or `/tmp` themselves: a scratch directory of mode
 * 1777 stands for `/tmp`, and the system directories are tried by an
 * unprivileged user (uid 65534), who could not change them even if the code
 * tried.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { LineReader, readAll } from "../_helpers/lines.ts";
import { cliArgs, runCli, spawnCli } from "../_helpers/run_cli.ts";
import { makeRepo, promptFile } from "../_helpers/temp_packet.ts";

const QUICK = promptFile(`
name: Quick
verify: {files_exist: [QUICK.md]}
simulate:
  attempts:
    - writes: [{path: QUICK.md, text: "quick"}]`);

/** Lasts a few seconds: long enough to still hold its lock while `forget` runs. */
const STEADY = promptFile(`
name: Steady
verify: {files_exist: [STEADY.md]}
simulate:
  attempts:
    - delay_ms: 100
      repeat: 40
      writes: [{path: STEADY.md, text: "steady"}]
      messages: ["working on it"]`);

/** A scratch tree: a packet `pk/` with repo `app` (a git repo), a checkout, a state home. */
interface Scratch extends AsyncDisposable {
  root: string;
  packet: string;
  checkout: string;
  env: Record<string, string>;
  write(name: string, text: string): Promise<string>;
  cli(
    args: string[],
    env?: Record<string, string>,
  ): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The registry's ids. */
  registered(): Promise<string[]>;
}

async function scratch(prompt = QUICK): Promise<Scratch> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "prompt_runner_ws_safety_" }),
  );
  const packet = join(root, "pk");
  await Deno.mkdir(join(packet, "prompts"), { recursive: true });
  await Deno.writeTextFile(
    join(packet, "prompt_runner_packet.md"),
    [
      "---",
      "name: safety",
      "provider: simulated",
      "repos:",
      "  app: {path: app, default: true}",
      "---",
      "",
    ].join("\n"),
  );
  await Deno.writeTextFile(join(packet, "prompts", "01_a.prompt.md"), prompt);
  await makeRepo(join(packet, "app"), { "README.md": "the author's\n" });
  const checkout = join(root, "checkout");
  await makeRepo(checkout, { "README.md": "the operator's\n" });
  const env = { XDG_STATE_HOME: join(root, "state") };
  return {
    root,
    packet,
    checkout,
    env,
    async write(name, text): Promise<string> {
      const path = join(root, name);
      await Deno.mkdir(join(path, ".."), { recursive: true });
      await Deno.writeTextFile(path, text);
      return path;
    },
    cli: (args, extra = {}) =>
      runCli(args, { cwd: root, env: { ...env, ...extra } }),
    async registered(): Promise<string[]> {
      try {
        return Object.keys(
          JSON.parse(
            await Deno.readTextFile(
              join(root, "state", "prompt_runner", "workspaces.json"),
            ),
          ),
        );
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return [];
        throw error;
      }
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await Deno.remove(root, { recursive: true });
    },
  };
}

/** A directory's entries, sorted. */
async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

/** A directory's mode bits (permissions, setuid/setgid/sticky). */
async function modeOf(path: string): Promise<number> {
  return (await Deno.lstat(path)).mode! & 0o7777;
}

function quoted(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

Deno.test("workspace prepare and run --workspace refuse a state_root that contains the packet, is or holds a checkout, or is a non-empty directory prompt_runner did not make: exit 2 naming the key and the clash, nothing changed", async () => {
  await using s = await scratch();
  await makeRepo(join(s.root, "nest", "co"));
  await makeRepo(join(s.root, "other"));
  await s.write("notes/todo.txt", "mine\n");
  const cases: [string, string, RegExp][] = [
    [
      "id: ops\npacket: pk\nstate_root: .\n",
      s.root,
      new RegExp(
        `line 3, key "state_root": "${quoted(s.root)}" contains the packet "${
          quoted(s.packet)
        }"$`,
        "m",
      ),
    ],
    [
      "id: ops\npacket: pk\nrepos:\n  app: checkout\nstate_root: checkout\n",
      s.checkout,
      new RegExp(
        `line 5, key "state_root": "${
          quoted(s.checkout)
        }" is the repo checkout "${quoted(s.checkout)}"$`,
        "m",
      ),
    ],
    [
      "id: ops\nrepos:\n  app: nest/co\nstate_root: nest\n",
      join(s.root, "nest"),
      new RegExp(
        `key "state_root": "${
          quoted(join(s.root, "nest"))
        }" contains the repo "${quoted(join(s.root, "nest", "co"))}"$`,
        "m",
      ),
    ],
    [
      "id: ops\npacket: pk\nstate_root: other\n",
      join(s.root, "other"),
      new RegExp(
        `key "state_root": "${
          quoted(join(s.root, "other"))
        }" is the repo checkout "${quoted(join(s.root, "other"))}"$`,
        "m",
      ),
    ],
    [
      "id: ops\npacket: pk\nstate_root: notes\n",
      join(s.root, "notes"),
      new RegExp(
        `key "state_root": "${
          quoted(join(s.root, "notes"))
        }" is a non-empty directory prompt_runner did not create \\(it holds "todo.txt"\\)$`,
        "m",
      ),
    ],
  ];
  for (const [yaml, dir, message] of cases) {
    await s.write("ws.yml", yaml);
    const before = { mode: await modeOf(dir), names: await entries(dir) };
    for (
      const args of [
        ["workspace", "prepare", "ws.yml"],
        ["run", "--workspace", "ws.yml", "--packet", "pk"],
      ]
    ) {
      const result = await s.cli(args);
      assert.equal(
        result.code,
        2,
        `${yaml}${args.join(" ")}: ${result.stderr}`,
      );
      assert.match(
        result.stderr,
        /^error: Invalid workspace file ".*ws\.yml"/m,
      );
      assert.match(result.stderr, message);
      assert.match(result.stderr, /^hint: /m);
    }
    assert.deepEqual(
      { mode: await modeOf(dir), names: await entries(dir) },
      before,
      `${yaml}: the directory was changed`,
    );
    assert.deepEqual(await s.registered(), []);
  }
});

Deno.test("run PACKET --state-root refuses the packet's parent, a repo checkout and a non-empty directory prompt_runner did not make (exit 2 naming --state-root); an empty directory keeps its mode, and an earlier run's state root is used again", async () => {
  await using s = await scratch();
  await s.write("notes/todo.txt", "mine\n");
  const cases: [string, RegExp][] = [
    [
      s.root,
      new RegExp(
        `^error: Invalid --state-root "${
          quoted(s.root)
        }": it contains the packet "${quoted(s.packet)}"$`,
        "m",
      ),
    ],
    [
      join(s.packet, "app"),
      new RegExp(
        `^error: Invalid --state-root "${
          quoted(join(s.packet, "app"))
        }": it is the repo checkout "${quoted(join(s.packet, "app"))}"$`,
        "m",
      ),
    ],
    [
      s.checkout,
      new RegExp(
        `^error: Invalid --state-root "${
          quoted(s.checkout)
        }": it is the repo checkout "${quoted(s.checkout)}"$`,
        "m",
      ),
    ],
    [
      join(s.root, "notes"),
      /^error: Invalid --state-root ".*notes": it is a non-empty directory prompt_runner did not create \(it holds "todo.txt"\)$/m,
    ],
  ];
  for (const [dir, message] of cases) {
    const before = { mode: await modeOf(dir), names: await entries(dir) };
    const result = await s.cli(["run", "pk", "--state-root", dir]);
    assert.equal(result.code, 2, `${dir}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.deepEqual(
      { mode: await modeOf(dir), names: await entries(dir) },
      before,
      `${dir} was changed`,
    );
  }
  const empty = join(s.root, "empty");
  await Deno.mkdir(empty);
  await Deno.chmod(empty, 0o755);
  const first = await s.cli(["run", "pk", "--state-root", "empty"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(await modeOf(empty), 0o755, "an empty directory kept its mode");
  assert.ok((await Deno.stat(join(empty, "state.json"))).isFile);
  const again = await s.cli(["run", "pk", "--state-root", "empty"]);
  assert.equal(again.code, 0, again.stderr);
  // The packet's own state root works as ever.
  const local = await s.cli(["run", "pk"]);
  assert.equal(local.code, 0, local.stderr);
  assert.equal(await modeOf(join(s.packet, ".prompt_runner")), 0o700);
});

Deno.test("a shared directory (mode 1777, standing for /tmp), a writable directory prompt_runner cannot tell it made, another user's directory and the home directory are refused as state roots (exit 4); their modes and owners are left alone", async () => {
  await using s = await scratch();
  const shared = join(s.root, "shared");
  await Deno.mkdir(shared);
  await Deno.chmod(shared, 0o1777);
  const writable = join(s.root, "writable");
  await Deno.mkdir(writable);
  await Deno.chmod(writable, 0o777);
  const theirs = join(s.root, "theirs");
  await Deno.mkdir(theirs);
  await Deno.chown(theirs, 65534, 65534);
  const home = join(s.root, "home");
  await Deno.mkdir(home);
  await Deno.chmod(home, 0o755);
  // The CLI's Deno keeps its cache where it was, not in the home tried here.
  const denoDir = await denoInfo("denoDir");
  const cases: [string, RegExp][] = [
    [shared, /it is a shared directory \(mode 1777: sticky, as \/tmp is\)/],
    [writable, /group or others can write it \(mode 777\)/],
    [theirs, /it belongs to user 65534/],
    [home, /it is the home directory/],
  ];
  for (const [dir, message] of cases) {
    const before = await Deno.lstat(dir);
    const result = await s.cli(
      ["run", "pk", "--state-root", dir],
      { HOME: home, DENO_DIR: denoDir },
    );
    assert.equal(result.code, 4, `${dir}: ${result.stderr}`);
    assert.match(result.stderr, /^error: Refused to use state root /m);
    assert.match(result.stderr, message);
    await s.write("ws.yml", `id: ops\npacket: pk\nstate_root: ${dir}\n`);
    const prepared = await s.cli(["workspace", "prepare", "ws.yml"], {
      HOME: home,
      DENO_DIR: denoDir,
    });
    assert.equal(prepared.code, 4, `${dir}: ${prepared.stderr}`);
    assert.match(prepared.stderr, message);
    const after = await Deno.lstat(dir);
    assert.equal(after.mode! & 0o7777, before.mode! & 0o7777, `mode of ${dir}`);
    assert.equal(after.uid, before.uid);
    assert.deepEqual(await entries(dir), []);
  }
  assert.deepEqual(await s.registered(), []);
});

/** A directory `deno info --json` names (`denoDir`, `npmCache`). */
async function denoInfo(key: "denoDir" | "npmCache"): Promise<string> {
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
  }).output();
  return JSON.parse(new TextDecoder().decode(info.stdout))[key];
}

/** Runs the CLI as uid/gid 65534 with no groups, with a Deno cache of its own. */
async function cliAsNobody(
  dir: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command("setpriv", {
    args: [
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      Deno.execPath(),
      ...cliArgs(args, ["--no-lock"]),
    ],
    cwd,
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: join(dir, "home"),
      XDG_STATE_HOME: join(dir, "state"),
      DENO_DIR: join(dir, "deno"),
      NO_COLOR: "1",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

const CAN_DROP_PRIVILEGES = Deno.uid() === 0 &&
  (await Deno.stat("/usr/bin/setpriv").then(() => true, () => false));

Deno.test({
  name:
    "/, /tmp and the system directories are refused as a state root (exit 4) by run --state-root and workspace prepare, tried as an unprivileged user",
  ignore: !CAN_DROP_PRIVILEGES,
  async fn(): Promise<void> {
    await using s = await scratch();
    // A tree uid 65534 can use: the packet, a state home, a Deno cache
    // holding the one npm package the CLI imports.
    const dir = join(s.root, "nobody");
    await Deno.mkdir(join(dir, "home"), { recursive: true });
    await Deno.mkdir(join(dir, "state"));
    const source = await denoInfo("npmCache");
    await Deno.mkdir(join(dir, "deno", "npm", "registry.npmjs.org"), {
      recursive: true,
    });
    const copy = await new Deno.Command("cp", {
      args: [
        "-r",
        join(source, "registry.npmjs.org", "yaml"),
        join(dir, "deno", "npm", "registry.npmjs.org"),
      ],
    }).output();
    assert.ok(copy.success, new TextDecoder().decode(copy.stderr));
    await new Deno.Command("cp", { args: ["-r", s.packet, join(dir, "pk")] })
      .output();
    const chown = await new Deno.Command("chown", {
      args: ["-R", "65534:65534", dir],
    }).output();
    assert.ok(chown.success);
    await Deno.chmod(s.root, 0o755);
    const watched = ["/", "/tmp", "/usr", "/etc", "/var/tmp"];
    const before = await Promise.all(watched.map((p) => Deno.lstat(p)));
    for (const system of watched) {
      const result = await cliAsNobody(
        dir,
        ["run", "pk", "--state-root", system],
        dir,
      );
      assert.equal(result.code, 4, `${system}: ${result.stderr}`);
      assert.match(
        result.stderr,
        new RegExp(
          `^error: Refused to use state root "${
            quoted(system)
          }": it is (the root directory|a system directory)`,
          "m",
        ),
      );
    }
    await Deno.writeTextFile(
      join(dir, "ws.yml"),
      "id: root\npacket: pk\nstate_root: /\n",
    );
    await Deno.chown(join(dir, "ws.yml"), 65534, 65534);
    const prepared = await cliAsNobody(
      dir,
      ["workspace", "prepare", "ws.yml"],
      dir,
    );
    assert.equal(prepared.code, 4, prepared.stderr);
    assert.match(
      prepared.stderr,
      /^error: Refused to use state root "\/": it is the root directory/m,
    );
    const after = await Promise.all(watched.map((p) => Deno.lstat(p)));
    for (let i = 0; i < watched.length; i++) {
      assert.equal(after[i]!.mode, before[i]!.mode, watched[i]);
    }
  },
});

Deno.test("workspace prepare refuses a state root inside or around another workspace's root, naming that workspace (exit 4)", async () => {
  await using s = await scratch();
  await s.write("a.yml", "id: a\nstate_root: roots/a\n");
  assert.equal((await s.cli(["workspace", "prepare", "a.yml"])).code, 0);
  const aRoot = join(s.root, "roots", "a");
  await s.write("b.yml", "id: b\nstate_root: roots\n");
  const around = await s.cli(["workspace", "prepare", "b.yml"]);
  assert.equal(around.code, 4, around.stderr);
  assert.match(
    around.stderr,
    new RegExp(
      `^error: Refused to prepare workspace "b": its state root "${
        quoted(join(s.root, "roots"))
      }" contains the state root "${quoted(aRoot)}" of workspace "a"$`,
      "m",
    ),
  );
  await s.write("c.yml", "id: c\nstate_root: roots/a/c\n");
  const inside = await s.cli(["workspace", "prepare", "c.yml"]);
  assert.equal(inside.code, 4, inside.stderr);
  assert.match(
    inside.stderr,
    new RegExp(
      `^error: Refused to prepare workspace "c": its state root "${
        quoted(join(aRoot, "c"))
      }" lies inside the state root "${quoted(aRoot)}" of workspace "a"$`,
      "m",
    ),
  );
  assert.deepEqual(await s.registered(), ["a"]);
  assert.deepEqual(await entries(aRoot), ["state_root.json"]);
  // Preparing a again is still fine.
  assert.equal((await s.cli(["workspace", "prepare", "a.yml"])).code, 0);
});

Deno.test("workspace forget --delete removes only what prompt_runner made, keeps the rest (links not followed) and says which; an untagged root is kept, and the message says so", async () => {
  await using s = await scratch();
  await s.write("ws.yml", "id: ops\npacket: pk\nstate_root: roots/ops\n");
  const root = join(s.root, "roots", "ops");
  const run = await s.cli(["run", "--workspace", "ws.yml"]);
  assert.equal(run.code, 0, run.stderr);
  const amend = await s.cli([
    "control",
    "amend",
    "ops",
    "01",
    "--add-file",
    "EXTRA.md",
    "--reason",
    "wanted",
  ]);
  assert.equal(amend.code, 0, amend.stderr);
  const made = await entries(root);
  for (const name of ["state_root.json", "state.json", "control", "logs"]) {
    assert.ok(made.includes(name), `${name} in ${made.join(", ")}`);
  }
  // What the operator put there, and links to outside.
  await s.write("roots/ops/notes.txt", "mine\n");
  await s.write("roots/ops/mine/keep.txt", "mine too\n");
  await s.write("outside/precious.txt", "precious\n");
  await Deno.symlink(join(s.root, "outside"), join(root, "outside"));
  await Deno.symlink(
    join(s.root, "outside"),
    join(root, "logs", "planted"),
  );
  const forgot = await s.cli(["workspace", "forget", "ops", "--delete"]);
  assert.equal(forgot.code, 0, forgot.stderr);
  // Every entry the run made is deleted, the tag last.
  const deleted = [
    ...made.filter((n) => n !== "state_root.json"),
    "state_root.json",
  ].map((n) => ["state.json", "state_root.json"].includes(n) ? n : `${n}/`);
  assert.equal(
    forgot.stdout,
    `Forgot workspace ops; deleted from its state root ${root}: ${
      deleted.join(", ")
    }\n` +
      `Kept ${root}, which still holds what prompt_runner did not make: mine/, notes.txt, outside (a link, not followed)\n`,
  );
  assert.deepEqual(await entries(root), ["mine", "notes.txt", "outside"]);
  assert.equal(
    await Deno.readTextFile(join(s.root, "outside", "precious.txt")),
    "precious\n",
  );
  assert.equal(
    await Deno.readTextFile(join(root, "mine", "keep.txt")),
    "mine too\n",
  );
  assert.deepEqual(await s.registered(), []);

  // Untagged: nothing is deleted, and the message says so.
  await s.write("ws2.yml", "id: ops2\npacket: pk\nstate_root: roots/ops2\n");
  assert.equal((await s.cli(["run", "--workspace", "ws2.yml"])).code, 0);
  const root2 = join(s.root, "roots", "ops2");
  await Deno.remove(join(root2, "state_root.json"));
  const names = await entries(root2);
  const untagged = await s.cli(["workspace", "forget", "ops2", "--delete"]);
  assert.equal(untagged.code, 0, untagged.stderr);
  assert.equal(
    untagged.stdout,
    `Forgot workspace ops2; deleted nothing: its state root ${root2} has no state_root.json tag, so prompt_runner cannot tell it made it (kept)\n`,
  );
  assert.deepEqual(await entries(root2), names);

  // A root holding only what prompt_runner made goes entirely.
  await s.write("ws3.yml", "id: ops3\npacket: pk\nstate_root: roots/ops3\n");
  assert.equal((await s.cli(["run", "--workspace", "ws3.yml"])).code, 0);
  const root3 = join(s.root, "roots", "ops3");
  const clean = await s.cli(["workspace", "forget", "ops3", "--delete"]);
  assert.equal(clean.code, 0, clean.stderr);
  assert.match(
    clean.stdout,
    new RegExp(
      `^Forgot workspace ops3 and deleted its state root ${
        quoted(root3)
      } \\(.*state_root\\.json.*\\)\\n$`,
    ),
  );
  await assert.rejects(Deno.lstat(root3), Deno.errors.NotFound);
});

Deno.test("workspace forget --delete racing run ID, 10 tries: either the run goes on and forget is refused, or forget deletes and the run refuses to start (exit 3); never a run in a re-created root", async () => {
  await using s = await scratch(STEADY);
  await s.write("ws.yml", "id: ops\npacket: pk\nstate_root: roots/ops\n");
  const root = join(s.root, "roots", "ops");
  for (let i = 0; i < 10; i++) {
    const prepared = await s.cli(["workspace", "prepare", "ws.yml"]);
    assert.equal(prepared.code, 0, prepared.stderr);
    const runner = spawnCli(["run", "ops", "--json"], {
      cwd: s.root,
      env: s.env,
    });
    const lines = new LineReader(runner.stdout);
    const runErr = readAll(runner.stderr);
    // Stagger forget by 0 to 225 ms: both orders, and the moment between.
    await new Promise((resolve) => setTimeout(resolve, i * 25));
    const forgot = await s.cli(["workspace", "forget", "ops", "--delete"]);
    if (forgot.code === 4) {
      // Refused: the run holds its root. Once it is under way, stop it; it
      // ends properly.
      assert.match(
        forgot.stderr,
        /^error: Refused to delete workspace "ops": a run \(\S+\) is using its state root$/m,
      );
      await lines.until((line) => line.includes('"type":"run_started"'));
      runner.kill("SIGTERM");
    }
    await lines.rest();
    const status = await runner.status;
    const stderr = await runErr;
    const events = [...lines.seen].filter((l) => l.startsWith("{")).map((l) =>
      JSON.parse(l)
    );
    const started = events.some((e) => e.type === "run_started");
    if (forgot.code === 4) {
      assert.ok(started, `try ${i}: forget was refused, but no run: ${stderr}`);
      assert.ok(
        [0, 143].includes(status.code),
        `try ${i}: ${status.code} ${stderr}`,
      );
      assert.equal(events.at(-1)?.type, "run_finished", `try ${i}`);
      assert.deepEqual(await s.registered(), ["ops"]);
      assert.ok((await Deno.stat(join(root, "state_root.json"))).isFile);
    } else {
      assert.equal(forgot.code, 0, `try ${i}: ${forgot.stderr}`);
      assert.match(forgot.stdout, /^Forgot workspace ops and deleted/);
      assert.equal(
        status.code,
        3,
        `try ${i}: forget deleted the root, yet the run went on (exit ${status.code}): ${stderr}`,
      );
      assert.equal(started, false, `try ${i}`);
      // Found forgotten as it started, or not found at all.
      assert.match(
        stderr,
        /^error: (Cannot run workspace "ops": it was forgotten as the run was starting|Cannot find packet "ops")/m,
      );
      await assert.rejects(
        Deno.lstat(root),
        Deno.errors.NotFound,
        `try ${i}: the root is back`,
      );
      assert.deepEqual(await s.registered(), []);
    }
  }
});

Deno.test("workspace prepare through a symlinked workspace.yml resolves packet:, repos: and state_root: beside the file it links to", async () => {
  await using s = await scratch();
  const real = join(s.root, "real");
  await Deno.mkdir(real);
  await Deno.rename(s.packet, join(real, "pk"));
  await Deno.rename(s.checkout, join(real, "co"));
  await Deno.writeTextFile(
    join(real, "ws.yml"),
    "id: linked\npacket: pk\nrepos:\n  app: co\nstate_root: roots/linked\n",
  );
  await Deno.mkdir(join(s.root, "links"));
  await Deno.symlink(join(real, "ws.yml"), join(s.root, "links", "ws.yml"));
  const prepared = await s.cli(["workspace", "prepare", "links/ws.yml"]);
  assert.equal(prepared.code, 0, prepared.stderr);
  const root = join(real, "roots", "linked");
  assert.equal(
    prepared.stdout,
    `Prepared workspace linked: state root ${root}\n`,
  );
  const tag = JSON.parse(
    await Deno.readTextFile(join(root, "state_root.json")),
  );
  assert.equal(tag.packet, join(real, "pk"));
  const run = await s.cli(["run", "linked"]);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    await Deno.readTextFile(join(real, "co", "QUICK.md")),
    "quick",
  );
});
