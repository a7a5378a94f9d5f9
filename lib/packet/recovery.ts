/**
 * The recovery block: resume, retry, repair and steering budgets.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import { refuseUnknownKeys } from "./known_keys.ts";
import { isRecord } from "../shared/is_record.ts";

/** How a prompt recovers from failures. Budgets count within one run. */
export interface RecoveryConfig {
  /** Steers accepted per prompt per run. */
  max_steers: number;
  /** Failure-resumes of the provider session within one attempt. */
  resume_attempts: number;
  /** Retries: a fresh attempt with the same prompt after a provider failure. */
  retry: {
    /** Retry attempts per prompt per run, for every failure class. */
    max_attempts: number;
    /** The first retry's delay in milliseconds; it doubles per retry. */
    base_delay_ms: number;
    /** The longest delay in milliseconds. */
    max_delay_ms: number;
    /** Whether to pick a random delay between half and all of it. */
    jitter: boolean;
    /** Per-class retry limits that replace `max_attempts` for that class. */
    class_attempts: Record<string, number>;
  };
  /** Repairs: a fresh attempt told what the verifier found unmet. */
  repair: {
    /** Whether repairs happen at all. */
    enabled: boolean;
    /** Repair attempts per prompt per run. */
    max_attempts: number;
  };
}

/** The keys of `recovery:`. */
export const RECOVERY_KEYS: readonly string[] = [
  "max_steers",
  "resume_attempts",
  "retry",
  "repair",
];
/** The keys of `recovery.retry`. */
const RETRY_KEYS = [
  "max_attempts",
  "base_delay_ms",
  "max_delay_ms",
  "jitter",
  "class_attempts",
];
/** The keys of `recovery.repair`. */
const REPAIR_KEYS = ["enabled", "max_attempts"];

/** The recovery settings a packet gets when it says nothing. */
export const DEFAULT_RECOVERY: Readonly<RecoveryConfig> = Object.freeze({
  max_steers: 3,
  resume_attempts: 2,
  retry: {
    max_attempts: 3,
    base_delay_ms: 1000,
    max_delay_ms: 30_000,
    jitter: true,
    class_attempts: {},
  },
  repair: { enabled: true, max_attempts: 2 },
});

function fail(file: string, key: string, problem: string): never {
  throw new UsageError(
    `Invalid recovery setting ${key} in "${file}": ${problem}`,
    { code: "INVALID_PACKET" },
  );
}

function count(value: unknown, file: string, key: string): number {
  if (typeof value === "string" && /^\d+$/.test(value.trim())) {
    return Number(value.trim());
  }
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    fail(
      file,
      key,
      `expected a whole number >= 0, found ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function flag(value: unknown, file: string, key: string): boolean {
  if (typeof value === "boolean") return value;
  fail(file, key, `expected true or false, found ${JSON.stringify(value)}`);
}

/**
 * Merges a `recovery:` block over a base configuration and checks every
 * value. Used for the manifest (over the defaults) and for each prompt (over
 * the packet's configuration).
 *
 * @param raw The `recovery:` value from front matter (absent keeps the base).
 * @param base The configuration the block overrides.
 * @param file The file the block came from, named in errors.
 * @returns The merged configuration.
 * @throws {UsageError} naming the file and the key for an unknown key or a bad value.
 */
export function parseRecovery(
  raw: unknown,
  base: Readonly<RecoveryConfig>,
  file: string,
): RecoveryConfig {
  const result: RecoveryConfig = structuredClone(base) as RecoveryConfig;
  if (raw === undefined || raw === null) return result;
  if (!isRecord(raw)) fail(file, "recovery", "expected a mapping");
  refuseUnknownKeys(raw, RECOVERY_KEYS, file, { at: "recovery" });
  if (raw.max_steers !== undefined) {
    result.max_steers = count(raw.max_steers, file, "recovery.max_steers");
  }
  if (raw.resume_attempts !== undefined) {
    result.resume_attempts = count(
      raw.resume_attempts,
      file,
      "recovery.resume_attempts",
    );
  }
  if (raw.retry !== undefined) {
    if (!isRecord(raw.retry)) {
      fail(file, "recovery.retry", "expected a mapping");
    }
    const retry = raw.retry;
    refuseUnknownKeys(retry, RETRY_KEYS, file, { at: "recovery.retry" });
    for (
      const key of ["max_attempts", "base_delay_ms", "max_delay_ms"] as const
    ) {
      if (retry[key] !== undefined) {
        result.retry[key] = count(retry[key], file, `recovery.retry.${key}`);
      }
    }
    if (retry.jitter !== undefined) {
      result.retry.jitter = flag(retry.jitter, file, "recovery.retry.jitter");
    }
    if (retry.class_attempts !== undefined) {
      if (!isRecord(retry.class_attempts)) {
        fail(file, "recovery.retry.class_attempts", "expected a mapping");
      }
      for (const [name, value] of Object.entries(retry.class_attempts)) {
        result.retry.class_attempts[name] = count(
          value,
          file,
          `recovery.retry.class_attempts.${name}`,
        );
      }
    }
  }
  if (raw.repair !== undefined) {
    if (!isRecord(raw.repair)) {
      fail(file, "recovery.repair", "expected a mapping");
    }
    const repair = raw.repair;
    refuseUnknownKeys(repair, REPAIR_KEYS, file, { at: "recovery.repair" });
    if (repair.enabled !== undefined) {
      result.repair.enabled = flag(
        repair.enabled,
        file,
        "recovery.repair.enabled",
      );
    }
    if (repair.max_attempts !== undefined) {
      result.repair.max_attempts = count(
        repair.max_attempts,
        file,
        "recovery.repair.max_attempts",
      );
    }
  }
  return result;
}
