/**
 * What the endurance scripts' audits share (`soak/`, `fuzz/`): reading
 * a state root (directory listings, JSONL, the snapshot, the event streams),
 * the snapshot's field list, the event types the audits look for, and the
 * check that no temp file is left.
 *
 * @module
 */

import { join } from "node:path";
import type { Violations } from "../_harness/mod.ts";
import type { EventType } from "../../lib/shared/events.ts";

// The snapshot's field list and the event types are lib/shared's schema's.
export { SNAPSHOT_FIELDS } from "../../lib/shared/snapshot_schema.ts";

/** The event types the audits look for (DESIGN §6). */
export type AuditedEventType = Extract<
  EventType,
  | "prompt_started"
  | "prompt_steered"
  | "verification_finished"
  | "run_finished"
>;

/** Whether a parsed event (or any parsed value) is an event of `type`. */
export function isEvent(event: unknown, type: AuditedEventType): boolean {
  return typeof event === "object" && event !== null &&
    (event as { type?: unknown }).type === type;
}

/** Parses a JSONL text; lines that are not JSON objects are reported. */
export function parseJsonl(
  text: string,
  where: string,
  violations: Violations,
): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  else if (lines.length > 0) {
    violations.add("torn line", `${where}: the last line has no newline`);
  }
  lines.forEach((line, i) => {
    try {
      const value = JSON.parse(line);
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        throw new Error("not an object");
      }
      out.push(value);
    } catch {
      violations.add(
        "unparseable line",
        `${where} line ${i + 1}: ${line.slice(0, 120)}`,
      );
    }
  });
  return out;
}

/** A file's text, or `null` when it is not there. */
export async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** A directory's entry names, sorted (none when it is not there). */
export async function listNames(dir: string): Promise<string[]> {
  try {
    return (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
      .sort();
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
}

/** A path's own file info (a link's, not its target's), or `null` when it is not there. */
export async function lstatOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

/** The snapshot (`control/snapshot.json`), or `null` when it is missing or unreadable. */
export async function readSnapshotFile(
  stateRoot: string,
): Promise<Record<string, unknown> | null> {
  try {
    return JSON.parse(
      await Deno.readTextFile(join(stateRoot, "control", "snapshot.json")),
    );
  } catch {
    return null;
  }
}

/** Every run's event stream: the current one and the archived ones. */
export async function readEventFiles(
  stateRoot: string,
  violations: Violations,
): Promise<Map<string, Record<string, unknown>[]>> {
  const files = new Map<string, Record<string, unknown>[]>();
  const control = join(stateRoot, "control");
  const paths = [join(control, "events.jsonl")];
  for (const name of await listNames(join(control, "events"))) {
    paths.push(join(control, "events", name));
  }
  for (const path of paths) {
    const text = await readTextOrNull(path);
    if (text === null) continue;
    files.set(path, parseJsonl(text, path, violations));
  }
  return files;
}

/** No dot-temp (`.*.tmp`) or claimed (`.*.claimed`) file anywhere in the state root. */
export async function checkTemps(
  stateRoot: string,
  violations: Violations,
): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (/^\..*\.(tmp|claimed)$/.test(entry.name)) {
        violations.add("no temp files", path.slice(stateRoot.length + 1));
      }
      if (entry.isDirectory) await walk(path);
    }
  };
  await walk(stateRoot);
}
