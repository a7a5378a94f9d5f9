/**
 * The wording of the runner's own events, shared by the renderers.
 *
 * @module
 */

import { duration } from "./duration.ts";
import type { RunEvent } from "../shared/events.ts";
import { cut, flatten } from "./_format.ts";
import type { EventData } from "../shared/events.ts";

/** A runner event in words: an icon, a sentence, and whether it is bad news. */
export interface RunnerLine {
  /** `▶`, `✓`, `✗`, `↻`, `»`, `■`. */
  icon: string;
  /** The sentence. */
  text: string;
  /** `good`, `bad`, `warn` or `info`, for colour. */
  tone: "good" | "bad" | "warn" | "info";
}

function seconds(ms: unknown): string {
  const value = Number(ms);
  if (!Number.isFinite(value)) return "?";
  return duration(value);
}

/** The first problem of a verification, for one-line modes. */
export function firstProblem(
  data: EventData<"verification_finished">,
): string {
  // The event may come from another process's file: the list is checked.
  const items = Array.isArray(data.items) ? data.items : [];
  const bad = items.find((item) => item.status !== "pass");
  if (bad) {
    return `${bad.clause} ${bad.label}: ${cut(flatten(bad.reason), 120)}`;
  }
  return typeof data.error === "string" ? cut(flatten(data.error), 160) : "";
}

/**
 * Describes a runner event, or returns `null` for a provider event. With
 * `firstProblemInline` off, a failed verification's line names only counts
 * (the caller lists the items).
 */
export function runnerLine(
  event: RunEvent,
  firstProblemInline = true,
): RunnerLine | null {
  const d = event.data;
  switch (event.type) {
    case "prompt_started":
      return {
        icon: "▶",
        text:
          `${d.prompt_id} ${d.name} · attempt ${d.attempt} (${d.mode}) · ${d.provider}/${d.model}`,
        tone: "info",
      };
    case "run_resumed":
      return {
        icon: "↻",
        text: `run resumed after seq ${Number(d.after_seq) || "?"} (${
          d.after === "interrupted"
            ? "it was interrupted"
            : "its runner had stopped"
        })`,
        tone: "warn",
      };
    case "session_resumed":
      return {
        icon: "↻",
        text:
          `resuming the session after ${d.failure_class} (${d.resume}/${d.limit})`,
        tone: "warn",
      };
    case "prompt_steered":
      return {
        icon: "»",
        text: `steer from ${d.author} delivered (${d.delivery}${
          d.mechanism ? `, ${d.mechanism}` : ""
        }): ${cut(flatten(String(d.text ?? "")), 100)}`,
        tone: "warn",
      };
    case "verification_finished": {
      const total = Array.isArray(d.items) ? d.items.length : 0;
      if (d.passed) {
        return {
          icon: "✓",
          text: `verified: ${total} of ${total} checks passed`,
          tone: "good",
        };
      }
      const parts = [`${d.failures} failed`];
      if (Number(d.faults) > 0) parts.push(`${d.faults} faulted`);
      const problem = firstProblemInline ? firstProblem(event.data) : "";
      return {
        icon: "✗",
        text: `verification: ${parts.join(", ")} of ${total}${
          problem ? ` — ${problem}` : ""
        }`,
        tone: "bad",
      };
    }
    case "retry_scheduled":
      return {
        icon: "↻",
        text: `retrying in ${seconds(d.delay_ms)} after ${d.failure_class}`,
        tone: "warn",
      };
    case "prompt_completed":
      return {
        icon: "✓",
        text: `prompt ${d.prompt_id} completed${
          d.reason ? `: ${cut(flatten(String(d.reason)), 160)}` : ""
        }`,
        tone: "good",
      };
    case "prompt_failed":
      return {
        icon: "✗",
        text: `prompt ${d.prompt_id} ${d.status}${
          d.reason ? `: ${cut(flatten(String(d.reason)), 160)}` : ""
        }`,
        tone: "bad",
      };
    case "run_finished":
      return {
        icon: "■",
        text: `run ${d.status}${
          d.reason ? `: ${cut(flatten(String(d.reason)), 160)}` : ""
        }`,
        tone: d.status === "completed" ? "good" : "bad",
      };
    default:
      return null;
  }
}
