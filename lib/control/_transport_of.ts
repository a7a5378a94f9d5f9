/**
 * Which transport a {@linkcode RunRef} names: its `transport`, else the file
 * transport.
 *
 * @module
 */

import { UsageError } from "../shared/errors.ts";
import { fileTransport } from "./file_transport.ts";
import type { RunRef } from "./paths.ts";
import type { Transport } from "./transport.ts";

const METHODS = [
  "readSnapshot",
  "eventLineBatches",
  "eventTextBatches",
  "eventByteBatches",
  "log",
  "followLog",
  "submit",
  "requestOutcome",
] as const;

/**
 * The transport a run is reached through.
 *
 * @throws {UsageError} when `ref.transport` is not a transport.
 */
export function transportOf(ref: RunRef): Transport {
  const named = ref.transport;
  if (named === undefined) return fileTransport;
  const candidate = named as Partial<Transport>;
  const missing = METHODS.filter((method) =>
    typeof candidate[method] !== "function"
  );
  if (missing.length > 0) {
    throw new UsageError(
      `Cannot reach run ${ref.run_id}: its transport ${
        JSON.stringify(String(named.name))
      } lacks ${missing.join(", ")}`,
      { code: "BAD_TRANSPORT" },
    );
  }
  return candidate as Transport;
}

/**
 * The transport a client names for an address: the given one, else the
 * file transport.
 */
export function transportNamed(transport: Transport | undefined): Transport {
  return transport ?? fileTransport;
}
