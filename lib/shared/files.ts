/**
 * Durable file primitives shared by the runner and the control plane:
 * atomic replace, no-replace publish, synced appends, private directories.
 * This module gathers them; each job lives in its own file.
 *
 * Every primitive takes `within`, the private root (a state root) the path
 * lies in. With it, the work is anchored to the file's directory (see
 * `_anchored.ts`): each component below the root is checked, a symbolic
 * link (or, for writing, a hard link to a file named elsewhere) is refused
 * with `LinkRefusedError`, files are created with `O_EXCL`, and
 * what was opened is checked against what was named before a byte is
 * written, so nothing is read or written through a link planted there, even
 * one swapped in between a check and a use.
 *
 * @module
 */

export {
  checkPath,
  currentUid,
  DIR_MODE,
  ensurePrivateDir,
  FILE_MODE,
  isTempName,
  syncDir,
  type WithinOptions,
  writeAll,
} from "./private_files.ts";
export { writeFileAtomic, writeFileNoReplace } from "./write_file.ts";
export { createNewFile, openAppend, openExisting } from "./open_file.ts";
export { appendLine, repairTornTail } from "./append_line.ts";
export { readAllText, readStateText, readTextIfExists } from "./read_file.ts";
export { moveLinkAside, removeStaleTemps } from "./stale_entries.ts";
export { isDirectory, pathExists } from "./path_exists.ts";
export { anchored, type Here } from "./_anchored.ts";
export { isEnvironmentError } from "./errors.ts";
