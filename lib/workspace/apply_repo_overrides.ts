/**
 * A workspace's repo overrides applied to a loaded packet: the packet's
 * repos point at the operator's checkouts, and each prompt's working
 * directory follows its repo.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import type { Packet } from "../packet/packet.ts";
import { workspaceKeyLine } from "./workspace_file.ts";

/**
 * Returns the packet with its repos' paths replaced by `overrides` (repo
 * name → path). Prompts working in a replaced repo work in the new path.
 *
 * @param packet The loaded packet.
 * @param overrides Repo name → absolute path.
 * @param file The workspace file, named in errors.
 * @throws {UsageError} (`INVALID_WORKSPACE`) when an override names a repo
 * the packet does not declare.
 */
export async function applyRepoOverrides(
  packet: Packet,
  overrides: Readonly<Record<string, string>>,
  file: string,
): Promise<Packet> {
  const names = packet.repos.map((repo) => repo.name);
  for (const name of Object.keys(overrides)) {
    if (!names.includes(name)) {
      const line = await workspaceKeyLine(file, ["repos", name]);
      throw new UsageError(
        `Invalid workspace file "${file}"${
          line === undefined ? "" : `, line ${line}`
        }, key "repos.${name}": packet "${packet.dir}" has no repo "${name}" (it declares ${
          names.length ? names.join(", ") : "no repos"
        })`,
        { code: "INVALID_WORKSPACE" },
      );
    }
  }
  if (Object.keys(overrides).length === 0) return packet;
  const moved = new Map<string, string>();
  const repos = packet.repos.map((repo) => {
    const path = overrides[repo.name];
    if (path === undefined) return repo;
    moved.set(repo.path, path);
    return { ...repo, path };
  });
  return {
    ...packet,
    repos,
    prompts: packet.prompts.map((prompt) => ({
      ...prompt,
      cwd: moved.get(prompt.cwd) ?? prompt.cwd,
    })),
  };
}
