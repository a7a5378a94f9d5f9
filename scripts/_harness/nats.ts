/**
 * Real NATS servers for the fleet's tests and benchmarks: Debian's
 * `nats-server` with JetStream, one node or a cluster on 127.0.0.1, on free
 * ports with stores in a temporary directory, started, killed, stopped and
 * started again by the caller, and removed with everything they wrote
 * (`PROMPT_RUNNER_KEEP_NATS_LOGS=DIR` keeps their logs there, to look into
 * a failure; `PROMPT_RUNNER_NATS_TRACE=1` makes them log every message).
 *
 * @module
 */

import { join } from "node:path";
import { onPath } from "./on_path.ts";

/** One server of a fleet under test. */
export interface NatsNode {
  /** Its name (`n1`, `n2`, …). */
  name: string;
  /** Its client port. */
  port: number;
  /** Its monitoring port (`/healthz`). */
  httpPort: number;
  /** Its cluster port (a cluster's routes), or 0. */
  clusterPort: number;
  /** Its configuration file. */
  config: string;
  /** The process, while it runs. */
  process: Deno.ChildProcess | null;
  /** How it ended when nobody stopped it (a crash), or `undefined`. */
  crashed?: Deno.CommandStatus;
}

/** Options for the servers. */
export interface NatsOptions {
  /** Extra configuration (an `authorization { … }` block, say). */
  extra?: string;
  /** The TLS block of every server (`tls { … }`). */
  tls?: string;
  /** Environment variables the servers read (`$VAR` in the configuration). */
  env?: Record<string, string>;
}

/**
 * A free TCP port on 127.0.0.1 (free when asked), drawn at random below the
 * kernel's ephemeral range: a port the kernel hands to some other test's
 * `listen(0)` or connection between this call and the server's bind would
 * otherwise be a real risk in a suite of parallel tests.
 */
export function freePort(): number {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    try {
      Deno.listen({ hostname: "127.0.0.1", port }).close();
      return port;
    } catch {
      // Taken: another.
    }
  }
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** A server that did not come up as ours (its port was taken meanwhile). */
class NotOurs extends Error {}

/** The `nats-server` binary the fleet tests start, or `null` when none is installed. */
export const NATS_SERVER: string | null = onPath("nats-server");

if (NATS_SERVER === null) {
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      "\n*** WARNING: nats-server is not installed: the fleet tests are SKIPPED " +
        "(.ci/run installs it: apt-get install nats-server) ***\n\n",
    ),
  );
}

/** Servers started for a test: one node, or a cluster. */
export class NatsServers implements AsyncDisposable {
  readonly dir: string;
  readonly nodes: NatsNode[];
  readonly #env: Record<string, string>;

  private constructor(
    dir: string,
    nodes: NatsNode[],
    env: Record<string, string>,
  ) {
    this.dir = dir;
    this.nodes = nodes;
    this.#env = env;
  }

  /**
   * Starts `count` servers (a cluster when more than one) and waits until
   * JetStream is ready; on other ports, when a port was taken meanwhile.
   */
  static async start(
    count = 1,
    options: NatsOptions = {},
  ): Promise<NatsServers> {
    for (let attempt = 1;; attempt++) {
      try {
        return await NatsServers.#start(count, options);
      } catch (error) {
        if (!(error instanceof NotOurs) || attempt === 3) throw error;
      }
    }
  }

  static async #start(
    count: number,
    options: NatsOptions,
  ): Promise<NatsServers> {
    const dir = await Deno.makeTempDir({ prefix: "prompt_runner_nats_" });
    const nodes: NatsNode[] = [];
    const tag = crypto.randomUUID().slice(0, 8);
    for (let i = 1; i <= count; i++) {
      nodes.push({
        name: `n${i}-${tag}`,
        port: freePort(),
        httpPort: freePort(),
        clusterPort: count > 1 ? freePort() : 0,
        config: join(dir, `n${i}.conf`),
        process: null,
      });
    }
    for (const node of nodes) {
      const routes = nodes.filter((other) => other !== node).map((other) =>
        `nats-route://127.0.0.1:${other.clusterPort}`
      );
      const store = join(dir, node.name);
      await Deno.writeTextFile(
        node.config,
        [
          `server_name: ${node.name}`,
          `listen: 127.0.0.1:${node.port}`,
          `http: 127.0.0.1:${node.httpPort}`,
          `jetstream { store_dir: ${
            JSON.stringify(store)
          }, max_memory_store: 256MB, max_file_store: 2GB }`,
          count > 1
            ? `cluster { name: prc, listen: 127.0.0.1:${node.clusterPort}, routes: [${
              routes.join(", ")
            }] }`
            : "",
          options.tls ?? "",
          options.extra ?? "",
          "",
        ].join("\n"),
      );
    }
    const servers = new NatsServers(dir, nodes, options.env ?? {});
    try {
      for (let i = 0; i < nodes.length; i++) servers.#spawn(i);
      for (let i = 0; i < nodes.length; i++) await servers.ready(i);
    } catch (error) {
      // A node that could not start (its port taken) ended by itself.
      await servers[Symbol.asyncDispose]().catch(() => {});
      throw error;
    }
    return servers;
  }

  #spawn(index: number): void {
    const node = this.nodes[index]!;
    if (NATS_SERVER === null) throw new Error("nats-server is not installed");
    node.process = new Deno.Command(NATS_SERVER, {
      args: [
        "-c",
        node.config,
        "-l",
        join(this.dir, `${node.name}.log`),
        ...(Deno.env.get("PROMPT_RUNNER_NATS_TRACE") === "1" ? ["-DV"] : []),
      ],
      env: this.#env,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    // What it says on stderr (a panic) goes to its log, kept with it.
    const log = Deno.openSync(join(this.dir, `${node.name}.log`), {
      append: true,
      create: true,
    });
    node.process.stderr.pipeTo(log.writable).catch(() => {});
    const process = node.process;
    process.status.then((status) => {
      if (node.process === process) node.crashed = status;
    });
  }

  /** The URL of node `index`, or of every node when absent. */
  url(index?: number): string {
    const nodes = index === undefined ? this.nodes : [this.nodes[index]!];
    return `nats://${nodes.map((n) => `127.0.0.1:${n.port}`).join(",")}`;
  }

  /**
   * Waits until node `index` says it is healthy (JetStream included), and
   * that it is ours: our process, still running, serving its own name.
   * With `streams: false` its JetStream server must be current (the
   * cluster's meta group back), but not yet every stream: after a whole
   * cluster restarts, catching every stream up is the product's to wait
   * for, and under load it outlasts any fixed wait.
   *
   * @throws {NotOurs} when it is not (a port was taken meanwhile).
   */
  async ready(
    index: number,
    timeoutMs = 30_000,
    { streams = true }: { streams?: boolean } = {},
  ): Promise<void> {
    const node = this.nodes[index]!;
    const deadline = Date.now() + timeoutMs;
    let exited = false;
    node.process?.status.then(() => exited = true);
    for (;;) {
      if (exited) throw new NotOurs(`nats-server ${node.name} exited`);
      try {
        const health = await fetch(
          `http://127.0.0.1:${node.httpPort}/healthz${
            streams ? "" : "?js-server-only=true"
          }`,
        );
        const ok = health.ok;
        await health.body?.cancel();
        if (ok) {
          const varz = await fetch(`http://127.0.0.1:${node.httpPort}/varz`);
          const info = await varz.json();
          if (info.server_name !== node.name || info.port !== node.port) {
            throw new NotOurs(`port ${node.httpPort} serves another server`);
          }
          return;
        }
      } catch (error) {
        if (error instanceof NotOurs) throw error;
        // Not listening yet.
      }
      if (Date.now() > deadline) {
        const log = await Deno.readTextFile(
          join(this.dir, `${node.name}.log`),
        ).catch(() => "");
        throw new Error(
          `nats-server ${node.name} was not healthy within ${timeoutMs} ms:\n${
            log.slice(-2000)
          }`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ends node `index` with a signal (SIGKILL by default) and waits for it. */
  async kill(index: number, signal: Deno.Signal = "SIGKILL"): Promise<void> {
    const node = this.nodes[index]!;
    const process = node.process;
    if (process === null) return;
    node.process = null;
    try {
      process.kill(signal);
    } catch {
      // Gone already.
    }
    await process.status;
  }

  /**
   * Starts nodes again, on their ports and stores, and waits until each one's
   * JetStream server is current (a cluster's nodes are started together: one
   * alone has no quorum). Its streams may still be catching up.
   */
  async restart(...indexes: number[]): Promise<void> {
    const started = indexes.filter((i) => this.nodes[i]!.process === null);
    for (const index of started) this.#spawn(index);
    for (const index of started) {
      await this.ready(index, 30_000, { streams: false });
    }
  }

  /**
   * Stops every node and removes their stores.
   *
   * @throws {Error} when a node ended by itself meanwhile (a crash is a
   * failure of the test, whatever else it saw), with the end of its log.
   */
  async [Symbol.asyncDispose](): Promise<void> {
    for (let i = 0; i < this.nodes.length; i++) await this.kill(i, "SIGTERM");
    const crashes: string[] = [];
    for (const node of this.nodes) {
      if (node.crashed === undefined) continue;
      const log = await Deno.readTextFile(join(this.dir, `${node.name}.log`))
        .catch(() => "");
      crashes.push(
        `nats-server ${node.name} ended by itself (exit ${node.crashed.code}${
          node.crashed.signal ? `, ${node.crashed.signal}` : ""
        }); the end of its log:\n${log.split("\n").slice(-30).join("\n")}`,
      );
    }
    await this.#keepLogsAndRemove();
    if (crashes.length > 0) throw new Error(crashes.join("\n\n"));
  }

  async #keepLogsAndRemove(): Promise<void> {
    const keep = Deno.env.get("PROMPT_RUNNER_KEEP_NATS_LOGS");
    if (keep) {
      for (const node of this.nodes) {
        await Deno.copyFile(
          join(this.dir, `${node.name}.log`),
          join(keep, `${node.name}.log`),
        ).catch(() => {});
      }
    }
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
