/**
 * Reading the fields of a manifest or prompt front matter: each reader names
 * the file and the key in the error it throws.
 *
 * @module
 */

import { NotFoundError, UsageError } from "../shared/errors.ts";
import { readPacketFile } from "./packet_files.ts";

const PROVIDER_ALIASES: Record<string, string> = {
  simulation: "simulated",
  cursor_agent: "cursor",
};

export function invalid(file: string, problem: string): never {
  throw new UsageError(`Invalid packet file "${file}": ${problem}`, {
    code: "INVALID_PACKET",
  });
}

export function optionalString(
  attrs: Record<string, unknown>,
  key: string,
  file: string,
): string | null {
  const value = attrs[key];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.trim() === "") {
    invalid(file, `${key} must be a non-empty string`);
  }
  return value.trim();
}

export function stringList(
  value: unknown,
  key: string,
  file: string,
): string[] | null {
  if (value === undefined || value === null) return null;
  const list = Array.isArray(value) ? value : [value];
  for (const item of list) {
    if (typeof item !== "string" || item.trim() === "") {
      invalid(file, `${key} must be a list of non-empty strings`);
    }
  }
  return list.map((item: string) => item.trim());
}

export function timeout(
  value: unknown,
  file: string,
  key = "timeout_ms",
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (
    typeof value === "string" &&
    ["unbounded", "infinity", "infinite", "none"].includes(value)
  ) {
    return null;
  }
  if (typeof value === "number" && Number.isInteger(value) && value > 0) {
    return value;
  }
  invalid(
    file,
    `${key} must be a positive number of milliseconds or "unbounded", found ${
      JSON.stringify(value)
    }`,
  );
}

export function provider(value: string | null): string | null {
  if (value === null) return null;
  const name = value.toLowerCase();
  return PROVIDER_ALIASES[name] ?? name;
}

/**
 * Reads a file of the packet, never through a link: a missing one is not
 * found, a link refused, an unreadable one invalid.
 */
export async function readFile(
  packetDir: string,
  path: string,
  what: string,
): Promise<string> {
  const text = await readPacketFile(packetDir, path, what);
  if (text === null) {
    throw new NotFoundError(`Cannot find ${what} "${path}"`, {
      code: "PACKET_NOT_FOUND",
    });
  }
  return text;
}

/** Keys an older packet format used, refused with the key that replaced them. */
const RENAMED_KEYS: Record<string, string> = {
  timeout: "timeout_ms",
  allowed_tools: "agent.allowed_tools",
  permission_mode: "agent.permission_mode",
};

/** Refuses a key of the older format, naming its replacement. */
export function refuseRenamedKeys(
  attrs: Record<string, unknown>,
  file: string,
): void {
  for (const [old, replacement] of Object.entries(RENAMED_KEYS)) {
    if (attrs[old] !== undefined) {
      throw new UsageError(
        `Invalid packet file "${file}": "${old}" is no longer a key`,
        { code: "INVALID_PACKET", hint: `Use ${replacement} instead` },
      );
    }
  }
}
