/**
 * How to tell a directory prompt_runner made from anybody else's (it holds
 * only what `state_root_layout.ts` names, but dot-temp files in flight and
 * links moved aside), and how to delete only that.
 *
 * @module
 */

import { join } from "node:path";
import { isTempName } from "./private_files.ts";
import { STATE_ROOT_ENTRIES, STATE_ROOT_NAMES } from "./state_root_layout.ts";

export { STATE_ROOT_ENTRIES };

/** The tag of a workspace's state root (`workspace/registry.ts` writes it). */
const TAG = STATE_ROOT_NAMES.tag;

/** A link the runner found where it writes, moved aside (`stale_entries.ts`). */
const LINK_ASIDE = /\.link-refused-\d{8}T\d{9}Z$/;

/** Tells whether `name` is something prompt_runner makes at the top of a state root. */
export function isStateRootEntry(name: string): boolean {
  return Object.hasOwn(STATE_ROOT_ENTRIES, name) || isTempName(name) ||
    LINK_ASIDE.test(name);
}

/** What a directory holds, as far as telling whether prompt_runner made it. */
export interface StateRootContents {
  /** Every entry's name, sorted. */
  names: string[];
  /** The entries prompt_runner does not make in a state root, sorted. */
  foreign: string[];
  /** Whether it holds a workspace's tag (`state_root.json`, a regular file). */
  tagged: boolean;
}

/** Lists a directory (`[]` when it does not exist) and sorts its entries. */
export async function readStateRootContents(
  dir: string,
): Promise<StateRootContents> {
  const names: string[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  names.sort();
  const tag = names.includes(TAG)
    ? await Deno.lstat(join(dir, TAG)).catch(() => null)
    : null;
  return {
    names,
    foreign: names.filter((name) => !isStateRootEntry(name)),
    tagged: tag?.isFile === true,
  };
}

/**
 * Tells whether prompt_runner can tell it made a directory: it holds only
 * what prompt_runner makes in a state root (and something), or a
 * workspace's tag. An empty directory could be anybody's.
 */
export function madeByPromptRunner(contents: StateRootContents): boolean {
  return contents.tagged ||
    (contents.names.length > 0 && contents.foreign.length === 0);
}

/** Names a few entries for a message: `"a", "b", "c" and 4 more`. */
export function someEntries(names: readonly string[]): string {
  const shown = names.slice(0, 3).map((name) => `"${name}"`).join(", ");
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}

/** What {@linkcode clearStateRoot} did. */
export interface ClearedStateRoot {
  /** What it deleted (directories with a trailing `/`), in order. */
  deleted: string[];
  /** What it kept, each with why when it is not simply someone else's. */
  kept: string[];
}

/**
 * Deletes what prompt_runner makes at the top of a state root, and nothing
 * else: each of {@linkcode STATE_ROOT_ENTRIES} of the kind it makes (a
 * directory with everything below it, links inside removed, never
 * followed), and dot-temp files. Anything else (an operator's file, a link
 * where a file or directory of ours would be, a link moved aside) is kept.
 * The tag goes last.
 *
 * @param root The state root's real path.
 * @param options Names to leave alone (`run.lock`, when the caller holds it).
 */
export async function clearStateRoot(
  root: string,
  options: { except?: readonly string[] } = {},
): Promise<ClearedStateRoot> {
  const { names } = await readStateRootContents(root);
  const deleted: string[] = [];
  const kept: string[] = [];
  const order = [
    ...names.filter((n) => n !== TAG),
    ...names.filter((n) => n === TAG),
  ];
  for (const name of order) {
    if (options.except?.includes(name)) continue;
    const path = join(root, name);
    const info = await Deno.lstat(path).catch(() => null);
    if (info === null) continue;
    const kind = Object.hasOwn(STATE_ROOT_ENTRIES, name)
      ? STATE_ROOT_ENTRIES[name]
      : isTempName(name)
      ? "file"
      : null;
    if (info.isSymlink) {
      kept.push(`${name} (a link, not followed)`);
    } else if (kind === "dir" && info.isDirectory) {
      // Deno.remove never follows a link, at the top or below.
      await Deno.remove(path, { recursive: true });
      deleted.push(`${name}/`);
    } else if (kind === "file" && info.isFile) {
      await Deno.remove(path);
      deleted.push(name);
    } else {
      kept.push(info.isDirectory ? `${name}/` : name);
    }
  }
  return { deleted, kept };
}
