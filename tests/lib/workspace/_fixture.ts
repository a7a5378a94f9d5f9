/**
 * Workspace fixtures: a state home, a packet, repos and workspace files in
 * one temporary directory that removes itself.
 *
 * @module
 */

import { join } from "node:path";

/** A temporary tree for workspace tests. */
export interface WorkspaceDirs {
  /** The temporary directory (its real path). */
  root: string;
  /** An environment whose XDG_STATE_HOME is inside `root`. */
  env: Record<string, string>;
  /** `root/packet`: a packet declaring repo `app`. */
  packet: string;
  /** `root/checkout`: a directory to override `app` with. */
  checkout: string;
  /** Writes `root/NAME` and returns its path. */
  write(name: string, text: string): Promise<string>;
}

/** Runs `fn` with a fresh tree (see {@linkcode WorkspaceDirs}). */
export async function withWorkspaceDirs(
  fn: (dirs: WorkspaceDirs) => Promise<void>,
): Promise<void> {
  const root = await Deno.realPath(
    await Deno.makeTempDir({ prefix: "workspace_test_" }),
  );
  try {
    const packet = join(root, "packet");
    await Deno.mkdir(join(packet, "prompts"), { recursive: true });
    await Deno.mkdir(join(packet, "workspace"));
    await Deno.writeTextFile(
      join(packet, "prompt_runner_packet.md"),
      "---\nname: p\nprovider: simulated\nrepos:\n  app: {path: workspace, default: true}\n---\n",
    );
    await Deno.writeTextFile(
      join(packet, "prompts", "01_a.prompt.md"),
      "---\nname: A\n---\nDo it.\n",
    );
    const checkout = join(root, "checkout");
    await Deno.mkdir(join(checkout, "src"), { recursive: true });
    await fn({
      root,
      env: { XDG_STATE_HOME: join(root, "state") },
      packet,
      checkout,
      async write(name: string, text: string): Promise<string> {
        const path = join(root, name);
        await Deno.writeTextFile(path, text);
        return path;
      },
    });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}
