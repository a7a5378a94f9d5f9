/**
 * The soak's checks of the requests: one receipt and one final log entry
 * per request, no steer applied twice, the steer budget kept. Exported so
 * tests can plant violations and see each one fire.
 *
 * @module
 */

import { join } from "node:path";
import {
  isEvent,
  listNames,
  parseJsonl,
  readTextOrNull,
} from "../../_audit/mod.ts";
import { Violations } from "../../_harness/mod.ts";

/** What the request audit counted. */
export interface RequestStats {
  /** Request ids audited. */
  ids: number;
  /** Final outcomes by command and outcome (`steer:applied`). */
  outcomes: Record<string, number>;
  /** Steers refused because the budget was spent. */
  budgetRefusals: number;
}

/**
 * Every request has exactly one receipt in `control/outcomes/` and exactly
 * one final log entry (`applied`/`rejected`) agreeing with it; a steer
 * accepted for its lane has one `accepted` entry before its final one, and
 * a request decided at once has none; every acknowledged request is among
 * them; `requests/` is empty.
 */
export async function checkRequests(
  stateRoot: string,
  acked: ReadonlyMap<string, string>,
  violations: Violations,
): Promise<RequestStats> {
  const control = join(stateRoot, "control");
  const log = parseJsonl(
    (await readTextOrNull(join(control, "log.jsonl"))) ?? "",
    "control/log.jsonl",
    violations,
  );
  const receipts = new Map<string, Record<string, unknown>[]>();
  for (const name of await listNames(join(control, "outcomes"))) {
    const text = await readTextOrNull(join(control, "outcomes", name));
    let receipt: Record<string, unknown>;
    try {
      receipt = JSON.parse(text ?? "");
      if (typeof receipt.request_id !== "string") throw new Error("no id");
    } catch {
      violations.add("receipt", `outcomes/${name} is not a receipt`);
      continue;
    }
    const id = receipt.request_id as string;
    receipts.set(id, [...(receipts.get(id) ?? []), receipt]);
  }
  const entries = new Map<
    string,
    { index: number; entry: Record<string, unknown> }[]
  >();
  log.forEach((entry, index) => {
    if (typeof entry.request_id !== "string") return;
    const id = entry.request_id;
    entries.set(id, [...(entries.get(id) ?? []), { index, entry }]);
  });
  const ids = new Set([...acked.keys(), ...receipts.keys(), ...entries.keys()]);
  const stats: RequestStats = {
    ids: ids.size,
    outcomes: {},
    budgetRefusals: 0,
  };
  for (const id of ids) {
    const own = receipts.get(id) ?? [];
    const lines = entries.get(id) ?? [];
    const tag = acked.has(id)
      ? `acknowledged ${acked.get(id)} ${id}`
      : `request ${id}`;
    if (own.length !== 1) {
      violations.add("one receipt", `${tag}: ${own.length} receipts`);
    }
    const finals = lines.filter(({ entry }) =>
      entry.outcome === "applied" || entry.outcome === "rejected"
    );
    const accepted = lines.filter(({ entry }) => entry.outcome === "accepted");
    if (finals.length !== 1) {
      violations.add(
        "one final log entry",
        `${tag}: ${finals.length} final entries (${
          lines.map(({ entry }) => entry.outcome).join(", ") || "none"
        })`,
      );
    }
    const receipt = own[0];
    const final = finals[0];
    if (receipt !== undefined && final !== undefined) {
      if (receipt.outcome === "accepted") {
        if (accepted.length !== 1) {
          violations.add(
            "steer accepted once",
            `${tag}: ${accepted.length} accepted entries for an accepted receipt`,
          );
        } else if (accepted[0]!.index > final.index) {
          violations.add(
            "steer accepted once",
            `${tag}: the accepted entry comes after the final one`,
          );
        }
      } else {
        if (accepted.length !== 0) {
          violations.add(
            "steer accepted once",
            `${tag}: receipt ${receipt.outcome} but ${accepted.length} accepted entries`,
          );
        }
        if (receipt.outcome !== final.entry.outcome) {
          violations.add(
            "receipt agrees with log",
            `${tag}: receipt ${receipt.outcome}, log ${final.entry.outcome}`,
          );
        }
      }
    }
    if (final !== undefined) {
      const key = `${final.entry.command}:${final.entry.outcome}`;
      stats.outcomes[key] = (stats.outcomes[key] ?? 0) + 1;
      if (
        final.entry.command === "steer" &&
        /budget spent/.test(String(final.entry.reason))
      ) stats.budgetRefusals++;
      if (
        final.entry.outcome === "rejected" &&
        (typeof final.entry.reason !== "string" || final.entry.reason === "")
      ) {
        violations.add("rejection has a reason", `${tag}: no reason`);
      }
    }
  }
  const left = await listNames(join(control, "requests"));
  if (left.length > 0) {
    violations.add(
      "requests consumed",
      `${left.length} entries left in requests/: ${
        left.slice(0, 5).join(", ")
      }`,
    );
  }
  return stats;
}

/** What the steer audit counted. */
export interface SteerStats {
  /** Delivered steers by delivery (`send_input`, `interrupt_and_resume`). */
  delivered: Record<string, number>;
}

/**
 * No steer is applied twice: per request id at most one line in
 * `interventions/*.jsonl` and at most one `prompt_steered` event; a steer
 * logged applied was recorded once, one logged rejected never; no prompt
 * got more than its budget in a run.
 */
export async function checkSteers(
  stateRoot: string,
  maxSteers: number,
  events: ReadonlyMap<string, Record<string, unknown>[]>,
  violations: Violations,
): Promise<SteerStats> {
  const records: Record<string, unknown>[] = [];
  const dir = join(stateRoot, "interventions");
  for (const name of await listNames(dir)) {
    records.push(
      ...parseJsonl(
        (await readTextOrNull(join(dir, name))) ?? "",
        `interventions/${name}`,
        violations,
      ),
    );
  }
  const byRequest = new Map<string, number>();
  const perPrompt = new Map<string, number>();
  const stats: SteerStats = { delivered: {} };
  for (const record of records) {
    const id = String(record.request_id);
    byRequest.set(id, (byRequest.get(id) ?? 0) + 1);
    const key = `${record.run_id} ${record.prompt}`;
    perPrompt.set(key, (perPrompt.get(key) ?? 0) + 1);
    const how = String(record.delivery);
    stats.delivered[how] = (stats.delivered[how] ?? 0) + 1;
  }
  for (const [id, count] of byRequest) {
    if (count > 1) {
      violations.add(
        "steer applied once",
        `steer ${id}: ${count} intervention lines`,
      );
    }
  }
  for (const [key, count] of perPrompt) {
    if (count > maxSteers) {
      violations.add(
        "steer budget",
        `run/prompt ${key}: ${count} steers delivered, budget ${maxSteers}`,
      );
    }
  }
  const steered = new Map<string, number>();
  for (const list of events.values()) {
    for (const event of list) {
      if (!isEvent(event, "prompt_steered")) continue;
      const id = String((event.data as Record<string, unknown>)?.request_id);
      steered.set(id, (steered.get(id) ?? 0) + 1);
    }
  }
  for (const [id, count] of steered) {
    if (count > 1) {
      violations.add(
        "steer applied once",
        `steer ${id}: ${count} prompt_steered events`,
      );
    }
    if (!byRequest.has(id)) {
      violations.add(
        "steer applied once",
        `steer ${id}: a prompt_steered event but no intervention record`,
      );
    }
  }
  const log = parseJsonl(
    (await readTextOrNull(join(stateRoot, "control", "log.jsonl"))) ?? "",
    "control/log.jsonl",
    new Violations(),
  );
  for (const entry of log) {
    if (entry.command !== "steer" || typeof entry.request_id !== "string") {
      continue;
    }
    const lines = byRequest.get(entry.request_id) ?? 0;
    if (entry.outcome === "applied" && lines !== 1) {
      violations.add(
        "steer applied once",
        `steer ${entry.request_id}: logged applied, ${lines} intervention lines`,
      );
    }
    if (entry.outcome === "rejected" && lines !== 0) {
      violations.add(
        "steer applied once",
        `steer ${entry.request_id}: logged rejected, but delivered (${lines} intervention lines)`,
      );
    }
  }
  return stats;
}
