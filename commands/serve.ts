/**
 * `prompt_runner serve`: the live web dashboard (DESIGN §10), a client of
 * the state roots like any CLI command, and with `--fleet URL` of a
 * fleet's runs (DESIGN §12), through `mod.ts` only.
 *
 * @module
 */

import {
  defaultAuthor,
  errorText,
  type FleetClient,
  onStopSignals,
  openFleetClient,
  UsageError,
} from "../mod.ts";
import { parseCommandArgs, stringFlag } from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { FLEET_FLAGS, fleetChoice, requireFleet } from "./_fleet_flags.ts";
import { SERVE_INFO } from "./_help.ts";
import { accessOf, isWildcard, newToken, originOf } from "./serve/_auth.ts";
import { FleetRuns } from "./serve/_fleet_runs.ts";
import { HttpServer } from "./serve/_http.ts";
import { RunIndex } from "./serve/_runs.ts";
import { Dashboard, refusal } from "./serve/_server.ts";

const FLAGS = {
  host: { type: "string" },
  port: { type: "string" },
  author: { type: "string" },
  origin: { type: "string", multiple: true },
  ...FLEET_FLAGS,
} as const;

/** The default address: this machine only. */
const DEFAULT_HOST = "127.0.0.1";

function portOf(given: string | undefined): number {
  if (given === undefined) return 0;
  const port = /^\d{1,5}$/.test(given) ? Number(given) : NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new UsageError(
      `Invalid --port ${
        JSON.stringify(given)
      }: expected a number from 0 to 65535`,
      { hint: "Run 'prompt_runner serve --help'" },
    );
  }
  return port;
}

function hostOf(given: string | undefined): string {
  const host = (given ?? DEFAULT_HOST).trim();
  if (host === "" || /[\s/?#@]/.test(host)) {
    throw new UsageError(
      `Invalid --host ${
        JSON.stringify(given)
      }: expected a host name or address`,
      { hint: "Run 'prompt_runner serve --help'" },
    );
  }
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/** Whether a host only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * The author recorded for web actions: `web:` + `--author`, else the name
 * the CLI's control commands record (`$USER`, `$LOGNAME`, the account name,
 * `uid:N`).
 */
async function authorOf(given: string | undefined): Promise<string> {
  return `web:${await defaultAuthor(given)}`;
}

/** The `--origin` values, each checked to be an origin and nothing more. */
function originsOf(given: unknown): string[] {
  const values = Array.isArray(given) ? given.map(String) : [];
  for (const value of values) {
    if (originOf(value) === null) {
      throw new UsageError(
        `Invalid --origin ${
          JSON.stringify(value)
        }: expected http://HOST[:PORT] or https://HOST[:PORT], with no path`,
        { hint: "Run 'prompt_runner serve --help'" },
      );
    }
  }
  return values;
}

/** The addresses a loopback bind also listens on, so each loopback name reaches it. */
const LOOPBACK_PAIR = ["127.0.0.1", "::1", "localhost"];

/**
 * Listens on `host:port`; a loopback bind on `127.0.0.1` and `::1` both
 * (the second when it can: no IPv6, or its port taken, leaves it out).
 */
function listen(
  host: string,
  port: number,
): { listeners: Deno.Listener[]; listening: string[]; port: number } {
  let first: Deno.Listener;
  try {
    first = Deno.listen({ hostname: host, port });
  } catch (error) {
    throw new UsageError(
      `Cannot listen on ${host}:${port}: ${errorText(error)}`,
      { hint: "Choose another --host or --port (0 picks a free port)" },
    );
  }
  const bound = first.addr as Deno.NetAddr;
  const listeners = [first];
  const listening = [bound.hostname];
  if (LOOPBACK_PAIR.includes(host)) {
    const other = bound.hostname === "::1" ? "127.0.0.1" : "::1";
    try {
      listeners.push(Deno.listen({ hostname: other, port: bound.port }));
      listening.push(other);
    } catch {
      // Only one loopback: the other name is not printed.
    }
  }
  return { listeners, listening, port: bound.port };
}

/** This machine's addresses a browser can name (no link-local ones). */
function ownAddresses(): string[] | null {
  const allowed = Deno.permissions.querySync({
    name: "sys",
    kind: "networkInterfaces",
  }).state === "granted";
  if (!allowed) return null;
  return Deno.networkInterfaces()
    .filter((i) => !(i.family === "IPv6" && /^fe[89ab]/i.test(i.address)))
    .map((i) => i.address);
}

function hostnameOrNull(): string | null {
  try {
    return Deno.hostname();
  } catch {
    return null;
  }
}

/** Resolves with 130 on SIGINT and 143 on SIGTERM. */
function stopSignal(): { stopped: Promise<number>; remove(): void } {
  let resolve: (code: number) => void = () => {};
  const stopped = new Promise<number>((r) => resolve = r);
  const remove = onStopSignals(
    ["SIGINT", "SIGTERM"],
    (_signal, exitCode) => resolve(exitCode),
  );
  return { stopped, remove };
}

/** A token to keep across restarts, so open pages go on working. */
const TOKEN_ENV = "PROMPT_RUNNER_SERVE_TOKEN";

function tokenOf(given: string | undefined): string {
  if (given === undefined || given === "") return newToken();
  if (!/^[A-Za-z0-9_-]{32,256}$/.test(given)) {
    throw new UsageError(
      `${TOKEN_ENV} must be 32 to 256 characters of A-Z, a-z, 0-9, - and _`,
      {
        hint:
          `Unset it for a random token, or reuse the one a dashboard printed`,
      },
    );
  }
  return given;
}

/**
 * The fleet the flags (else the environment) name, opened, with the runs
 * its fleet TARGETs name; `null` when no fleet is named.
 *
 * @throws {UsageError} for a fleet TARGET without a fleet, a malformed
 * URL, or a TARGET several runs match; {@linkcode NotFoundError} for one
 * no run matches; `FLEET_UNREACHABLE` (exit 4) when the fleet cannot be
 * reached (its secrets masked).
 */
async function openFleet(
  values: Record<string, unknown>,
  targets: string[],
  context: CommandContext,
): Promise<FleetRuns | null> {
  const named = targets.filter((target) => target.startsWith("fleet:"));
  const choice = named.length > 0
    ? requireFleet(values, context.cwd, named[0]!)
    : fleetChoice(values, context.cwd);
  if (choice === null) return null;
  const client: FleetClient = await openFleetClient({
    url: choice.parsed,
    ...(choice.creds_file === null ? {} : { credsFile: choice.creds_file }),
    ...(choice.ca_file === null ? {} : { caFile: choice.ca_file }),
  });
  try {
    let only: Set<string> | null = null;
    for (const target of named) {
      only ??= new Set();
      only.add((await client.resolve(target)).key);
    }
    return new FleetRuns({
      client,
      choice,
      only,
      warn: (line) => void context.stderr.line(line).catch(() => {}),
    });
  } catch (error) {
    await client.close();
    throw error;
  }
}

async function serve(
  context: CommandContext,
  argv: string[],
): Promise<number> {
  const args = parseCommandArgs("serve", argv, FLAGS);
  if (args.values.help) {
    await context.stdout.write(SERVE_INFO.help);
    return 0;
  }
  const host = hostOf(stringFlag(args, "host"));
  const port = portOf(stringFlag(args, "port"));
  const extra = originsOf(args.values.origin);
  const author = await authorOf(stringFlag(args, "author"));
  const token = tokenOf(Deno.env.get(TOKEN_ENV));
  const fleet = await openFleet(args.values, args.positionals, context);
  let index: RunIndex;
  try {
    index = await RunIndex.open(
      args.positionals.filter((target) => !target.startsWith("fleet:")),
      context.cwd,
      fleet,
    );
  } catch (error) {
    await fleet?.client.close();
    throw error;
  }
  const stop = new AbortController();
  let bound: ReturnType<typeof listen>;
  try {
    bound = listen(host, port);
  } catch (error) {
    index.close();
    await fleet?.client.close();
    throw error;
  }
  const addresses = isWildcard(host) ? ownAddresses() : [];
  const access = accessOf({
    host,
    port: bound.port,
    listening: bound.listening,
    addresses: addresses ?? [],
    hostname: isWildcard(host) ? hostnameOrNull() : null,
    extra,
  });
  let warned = -Infinity;
  const signals = stopSignal();
  const dashboard = new Dashboard({
    index,
    token,
    access,
    author,
    stop: stop.signal,
  });
  const server = new HttpServer({
    listeners: bound.listeners,
    handler: (request) => dashboard.handle(request),
    refusal,
    onAcceptError: (error) => {
      // Once a minute at most: a flood would fill the terminal.
      if (Date.now() - warned < 60_000) return;
      warned = Date.now();
      void context.stderr.line(
        `warning: the dashboard cannot accept a connection: ${error.message}; it closes the connections that wait longest and goes on`,
      ).catch(() => {});
    },
  });
  try {
    for (const origin of access.origins) {
      await context.stdout.line(`dashboard: ${origin}/?token=${token}`);
    }
    if (!isLoopback(host)) {
      await context.stderr.line(
        `warning: the dashboard listens on ${host}, beyond this machine: anyone who has its URL (with the token) can steer and amend these runs`,
      );
    }
    if (addresses === null) {
      await context.stderr.line(
        `warning: without --allow-sys=networkInterfaces the dashboard does not know this machine's addresses: add --origin for each address it is opened at`,
      );
    }
    return await signals.stopped;
  } finally {
    signals.remove();
    stop.abort();
    await server.shutdown();
    index.close();
    await fleet?.client.close();
  }
}

/** The `serve` command. */
export const serveCommand: Command = {
  ...SERVE_INFO,
  run: serve,
};
