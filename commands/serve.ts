/**
 * `prompt_runner serve`: the live web dashboard (DESIGN §10), a client of
 * the state roots like any CLI command, through `mod.ts` only.
 *
 * @module
 */

import { UsageError } from "../mod.ts";
import { parseCommandArgs, stringFlag } from "./_args.ts";
import type { Command, CommandContext } from "./_context.ts";
import { SERVE_INFO } from "./_help.ts";
import { newToken } from "./serve/_auth.ts";
import { RunIndex } from "./serve/_runs.ts";
import { handleRequest } from "./serve/_server.ts";

const FLAGS = {
  host: { type: "string" },
  port: { type: "string" },
  author: { type: "string" },
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

/** The author recorded for web actions: `web:` + `--author`, `$USER`, `$LOGNAME`. */
function authorOf(given: string | undefined): string {
  const name = [given, Deno.env.get("USER"), Deno.env.get("LOGNAME")]
    .map((value) => value?.trim() ?? "").find((value) => value !== "");
  return `web:${name ?? "unknown"}`;
}

/** Resolves with 130 on SIGINT and 143 on SIGTERM. */
function stopSignal(): { stopped: Promise<number>; remove(): void } {
  let resolve: (code: number) => void = () => {};
  const stopped = new Promise<number>((r) => resolve = r);
  const listeners: [Deno.Signal, () => void][] = [
    ["SIGINT", () => resolve(130)],
    ["SIGTERM", () => resolve(143)],
  ];
  for (const [signal, listener] of listeners) {
    Deno.addSignalListener(signal, listener);
  }
  return {
    stopped,
    remove(): void {
      for (const [signal, listener] of listeners) {
        Deno.removeSignalListener(signal, listener);
      }
    },
  };
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
  const author = authorOf(stringFlag(args, "author"));
  const index = await RunIndex.open(args.positionals, context.cwd);
  const token = tokenOf(Deno.env.get(TOKEN_ENV));
  const stop = new AbortController();
  const signals = stopSignal();
  let origin = "";
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve({
      hostname: host,
      port,
      onListen: () => {},
    }, (request) =>
      handleRequest({
        index,
        token,
        origin: () => origin,
        author,
        stop: stop.signal,
      }, request));
  } catch (error) {
    signals.remove();
    index.close();
    throw new UsageError(
      `Cannot listen on ${host}:${port}: ${(error as Error).message}`,
      { hint: "Choose another --host or --port (0 picks a free port)" },
    );
  }
  try {
    const shown = host.includes(":") ? `[${host}]` : host;
    origin = `http://${shown}:${server.addr.port}`;
    await context.stdout.line(`dashboard: ${origin}/?token=${token}`);
    if (!isLoopback(host)) {
      await context.stderr.line(
        `warning: the dashboard listens on ${host}, beyond this machine: anyone who has its URL (with the token) can steer and amend these runs`,
      );
    }
    return await signals.stopped;
  } finally {
    signals.remove();
    stop.abort();
    index.close();
    await server.shutdown();
  }
}

/** The `serve` command. */
export const serveCommand: Command = {
  ...SERVE_INFO,
  run: serve,
};
