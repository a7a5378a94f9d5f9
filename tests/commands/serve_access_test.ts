/**
 * Who `prompt_runner serve` answers (issue 19): the origins it is really
 * reachable at (loopback names, a wildcard bind's own addresses and host
 * name, an operator's `--origin`), the `Host` of every request checked
 * against them (no DNS rebinding), a cookie per port, a 404 for an unknown
 * prompt's contract, redirects that stay on the dashboard, and the web
 * author's fallback chain.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { readJsonl, startRun, waitForSnapshot } from "../_helpers/live_run.ts";
import { runCli, waitFor } from "../_helpers/run_cli.ts";
import {
  rawGet,
  rawPost,
  rootKey,
  serve,
  type ServeProcess,
} from "../_helpers/serve_process.ts";
import { longPrompt, makePacket } from "../_helpers/temp_packet.ts";

/** The `dashboard: URL` lines a server printed, once `count` are there. */
async function urlLines(
  server: ServeProcess,
  count: number,
): Promise<string[]> {
  return await waitFor(`${count} URL lines`, () => {
    const urls = server.lines.filter((l) => l.startsWith("dashboard: "));
    return Promise.resolve(urls.length >= count ? urls : null);
  }, 10_000);
}

/** A steer posted with `host` and `origin`: its status and JSON answer. */
async function steerFrom(
  server: ServeProcess,
  path: string,
  host: string,
  origin: string | undefined,
): Promise<{ status: number; outcome: string | null }> {
  const response = await rawPost(server.port, path, {
    host,
    ...(origin === undefined ? {} : { origin }),
    cookie: server.cookie,
    body: "text=hello",
  });
  let outcome: string | null = null;
  try {
    outcome = JSON.parse(response.body).outcome ?? null;
  } catch {
    // Not JSON: a refusal page.
  }
  return { status: response.status, outcome };
}

Deno.test("serve on loopback answers as 127.0.0.1, localhost and [::1]: forms post from each, each is printed, a cross-site post is still refused", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(60, 50) },
  });
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  await using server = await serve([packet.dir]);
  const { port, token } = server;
  const lines = await urlLines(server, 3);
  assert.deepEqual(lines, [
    `dashboard: http://127.0.0.1:${port}/?token=${token}`,
    `dashboard: http://localhost:${port}/?token=${token}`,
    `dashboard: http://[::1]:${port}/?token=${token}`,
  ]);
  const path = `/run/${rootKey(packet.stateRoot)}/${snapshot.run_id}/steer`;
  for (const host of ["127.0.0.1", "localhost", "[::1]"]) {
    const posted = await steerFrom(
      server,
      path,
      `${host}:${port}`,
      `http://${host}:${port}`,
    );
    assert.equal(posted.status, 200, host);
    assert.ok(["accepted", "applied"].includes(posted.outcome!), host);
  }
  // [::1] is really listened on (curl may reach it; this test may not).
  const curl = await new Deno.Command("curl", {
    args: [
      "-s",
      "-g",
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      `http://[::1]:${port}/`,
    ],
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.equal(new TextDecoder().decode(curl.stdout), "401", "[::1] answers");
  for (
    const origin of [
      "http://evil.example",
      `http://evil.example:${port}`,
      `http://127.0.0.1:${port + 1}`,
      "null",
      undefined,
    ]
  ) {
    const posted = await steerFrom(server, path, `127.0.0.1:${port}`, origin);
    assert.equal(posted.status, 403, `Origin ${origin}`);
  }
  const steers = (await readJsonl(
    join(packet.stateRoot, "control", "log.jsonl"),
  )).filter((e) => e.command === "steer" && e.outcome === "accepted");
  assert.equal(steers.length, 3, "one steer from each origin, no more");
  run.child.kill("SIGTERM");
  await run.finish();
});

Deno.test("serve refuses a request whose Host it is not served at, with or without the token: a rebound name gets no page, no cookie, no post", async () => {
  await using packet = await makePacket();
  await using server = await serve([packet.dir]);
  const { port, token, cookie } = server;
  for (
    const host of [
      "evil.example",
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      `localhost.evil.example:${port}`,
    ]
  ) {
    const page = await rawGet(port, "/", host, { cookie });
    assert.equal(page.status, 403, `page with Host ${host}`);
    assert.doesNotMatch(page.body, /id="runs"/);
    const login = await rawGet(port, `/?token=${token}`, host);
    assert.equal(login.status, 403, `login with Host ${host}`);
    assert.equal(login.headers.get("set-cookie"), undefined);
    const post = await rawPost(
      port,
      `/run/${rootKey(packet.stateRoot)}/r/steer`,
      {
        host,
        origin: `http://${host}`,
        cookie,
        body: "text=hello",
      },
    );
    assert.equal(post.status, 403, `post with Host ${host}`);
  }
  const missing = await rawGet(port, "/", "", { cookie });
  assert.equal(missing.status, 400, "an empty Host");
  // The same requests with the dashboard's own Host are answered.
  const ok = await rawGet(port, "/", `localhost:${port}`, { cookie });
  assert.equal(ok.status, 200);
  assert.match(ok.body, /id="runs"/);
});

Deno.test("serve on a wildcard address answers at this machine's own addresses and host name, and prints them; --origin adds a reverse proxy's name; a bad --origin is a usage error", async () => {
  await using packet = await makePacket();
  await using server = await serve([
    packet.dir,
    "--host",
    "0.0.0.0",
    "--origin",
    "https://dash.example.com",
    "--origin",
    "http://proxy.example:8443",
  ]);
  const { port, token, cookie } = server;
  const hostname = Deno.hostname();
  const lines = await waitFor("the URL lines", () => {
    const urls = server.lines.filter((l) => l.startsWith("dashboard: "));
    return Promise.resolve(
      urls.some((l) => l.includes(`//${hostname}:`)) &&
        urls.some((l) => l.includes("dash.example.com"))
        ? urls
        : null,
    );
  }, 10_000);
  assert.equal(lines[0], `dashboard: http://0.0.0.0:${port}/?token=${token}`);
  const hosts = lines.map((l) => new URL(l.slice("dashboard: ".length)).host);
  for (
    const expected of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `${hostname}:${port}`,
      "dash.example.com",
      "proxy.example:8443",
    ]
  ) {
    assert.ok(hosts.includes(expected), `${expected} in ${hosts.join(" ")}`);
  }
  // Every printed host is answered, and a form posts from it.
  const path = `/run/${rootKey(packet.stateRoot)}/no-such-run/steer`;
  for (const line of lines) {
    const url = new URL(line.slice("dashboard: ".length));
    const page = await rawGet(port, "/", url.host, { cookie });
    assert.equal(page.status, 200, url.host);
    const posted = await steerFrom(server, path, url.host, url.origin);
    assert.notEqual(posted.status, 403, url.origin);
    assert.ok(posted.outcome === "refused", `${url.origin}: ${posted.outcome}`);
  }
  // A machine address other than loopback, when it has one.
  const own = hosts.filter((h) =>
    /^\d+\.\d+\.\d+\.\d+:/.test(h) && !/^(127|0)\./.test(h)
  );
  for (const host of own) {
    assert.equal((await rawGet(port, "/", host, { cookie })).status, 200);
  }
  assert.equal(
    (await steerFrom(server, path, `127.0.0.1:${port}`, "https://evil.example"))
      .status,
    403,
  );
  for (
    const bad of [
      "dash.example.com",
      "ftp://x.example",
      "http://x.example/path",
      "http://u@x.example",
      "http://x.example?q",
    ]
  ) {
    const refused = await runCli(["serve", packet.dir, "--origin", bad]);
    assert.equal(refused.code, 2, `${bad}: ${refused.stderr}`);
    assert.match(refused.stderr, /^error: Invalid --origin /, bad);
    assert.equal(refused.stdout, "");
  }
});

Deno.test("serve names its cookie after its port: pr_token_PORT, and a cookie of another name does not log in", async () => {
  await using packet = await makePacket();
  await using first = await serve([packet.dir]);
  await using second = await serve([packet.dir], {
    env: { PROMPT_RUNNER_SERVE_TOKEN: first.token },
  });
  for (const server of [first, second]) {
    const login = await rawGet(
      server.port,
      `/?token=${server.token}`,
      `127.0.0.1:${server.port}`,
    );
    assert.equal(login.status, 303);
    assert.equal(
      login.headers.get("set-cookie"),
      `pr_token_${server.port}=${server.token}; HttpOnly; SameSite=Strict; Path=/`,
    );
  }
  // The same token, another dashboard's cookie: each reads only its own.
  const other = `pr_token_${first.port}=${first.token}`;
  const host = `127.0.0.1:${second.port}`;
  assert.equal(
    (await rawGet(second.port, "/", host, { cookie: other })).status,
    401,
  );
  assert.equal(
    (await rawGet(second.port, "/", host, {
      cookie: `pr_token=${first.token}`,
    }))
      .status,
    401,
  );
  assert.equal(
    (await rawGet(second.port, "/", host, {
      cookie: `${other}; ${second.cookie}`,
    }))
      .status,
    200,
  );
});

Deno.test("serve answers 404 for an unknown prompt's contract page and redirects ?token= only to a path on the dashboard", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(1) },
  });
  const ran = await runCli(["run", packet.dir]);
  assert.equal(ran.code, 0, ran.stderr);
  await using server = await serve([packet.dir]);
  const { port, token, cookie } = server;
  const host = `127.0.0.1:${port}`;
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run",
    () => true,
  );
  const run = `/run/${rootKey(packet.stateRoot)}/${snapshot.run_id}`;
  const known = await rawGet(port, `${run}/contract/01`, host, { cookie });
  assert.equal(known.status, 200);
  const unknown = await rawGet(port, `${run}/contract/99`, host, { cookie });
  assert.equal(unknown.status, 404);
  assert.match(unknown.body, /No prompt &quot;99&quot;/);
  for (
    const [path, location] of [
      [`//evil.example/x?token=${token}`, "/evil.example/x"],
      [`///evil.example/x?token=${token}&a=1`, "/evil.example/x?a=1"],
      [`/\\evil.example/x?token=${token}`, "/evil.example/x"],
      [`/%2F%2Fevil.example?token=${token}`, "/%2F%2Fevil.example"],
      [`${run}?token=${token}&thinking=hide`, `${run}?thinking=hide`],
    ]
  ) {
    const response = await rawGet(port, path!, host);
    assert.equal(response.status, 303, path);
    assert.equal(response.headers.get("location"), location, path);
  }
});

Deno.test("serve with USER and LOGNAME unset authors web actions as the CLI does: web: and the account name", async () => {
  await using packet = await makePacket({
    prompts: { "01_a.prompt.md": longPrompt(40, 50) },
  });
  const unsetEnv = ["USER", "LOGNAME", "USERNAME"];
  await using run = startRun(packet.dir);
  const snapshot = await waitForSnapshot(
    packet.stateRoot,
    "the run to start",
    (s) => s.status === "running",
  );
  const cli = await runCli(["control", "steer", packet.dir, "from the CLI"], {
    unsetEnv,
  });
  assert.equal(cli.code, 0, cli.stderr);
  await using server = await serve([packet.dir], { unsetEnv });
  const posted = await steerFrom(
    server,
    `/run/${rootKey(packet.stateRoot)}/${snapshot.run_id}/steer`,
    `127.0.0.1:${server.port}`,
    server.origin,
  );
  assert.equal(posted.status, 200);
  const log = await waitFor("both steers in the log", async () => {
    const entries = (await readJsonl(
      join(packet.stateRoot, "control", "log.jsonl"),
    )).filter((e) => e.command === "steer" && e.outcome === "accepted");
    return entries.length === 2 ? entries : null;
  });
  const [fromCli, fromWeb] = log.map((e) => String(e.author));
  assert.notEqual(fromCli, "unknown");
  assert.equal(fromWeb, `web:${fromCli}`);
  run.child.kill("SIGTERM");
  await run.finish();
});
