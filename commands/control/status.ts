/**
 * `prompt_runner control status`: the live run's snapshot.
 *
 * @module
 */

// Files, not the lib barrels: a status poller starts this often, and loads
// only what it uses.
import type { Snapshot } from "../../lib/control/snapshot.ts";
import {
  paint,
  terminalSafe,
  terminalSafeData,
} from "../../lib/render/ansi.ts";
import { duration } from "../../lib/render/duration.ts";
import {
  attentionText,
  spendingText,
} from "../../lib/status/attention_text.ts";
import type { CommandContext } from "../_context.ts";
import { type ControlInput, declareControl } from "./_declare.ts";

function statusText(
  current: Snapshot,
  gone: boolean,
  fleet: boolean,
): string {
  if (current.status === "running") {
    return gone
      ? paint(
        fleet
          ? "running, but unreachable: the fleet has not heard from it for over 10 s"
          : `running, but its runner (pid ${current.pid}) is gone`,
        "red",
      )
      : paint("running", "green");
  }
  return paint(
    current.status,
    current.status === "completed" ? "green" : "red",
  );
}

/** The snapshot of the run a fleet TARGET names, and whether it went silent. */
async function fleetSnapshot(
  input: ControlInput<undefined>,
): Promise<{ stored: Snapshot; gone: boolean }> {
  const { runAt } = await import("./_run_at.ts");
  const { snapshot } = await import("../../lib/control/current_run.ts");
  await using run = await runAt(input);
  return { stored: await snapshot(run.ref), gone: run.unreachable === true };
}

async function showStatus(
  context: CommandContext,
  input: ControlInput<undefined>,
): Promise<number> {
  const { values, location } = input;
  // One read of the newest run's snapshot: a poll that lands as one run
  // hands the state root to the next shows the next, never a stale error.
  const { currentSnapshot } = await import("../../lib/control/current_run.ts");
  const fleet = input.fleet === null ? null : await fleetSnapshot(input);
  const stored = fleet?.stored ??
    await currentSnapshot(location.state_root);
  if (values.json) {
    await context.stdout.json(stored);
    return 0;
  }
  // The packet's and prompt's names, the model: anyone's text, shown safely.
  const current = terminalSafeData(stored);
  let gone = fleet?.gone ?? false;
  if (current.status === "running" && fleet === null) {
    // Loaded here: checking the runner's process is not needed for --json.
    const { readRunLock } = await import("../../lib/shared/run_lock.ts");
    const lock = await readRunLock(location.state_root);
    gone = lock === null || !lock.alive ||
      lock.info?.run_id !== stored.run_id;
  }
  const age = Date.now() - Date.parse(current.updated_at);
  const attention = current.attention;
  const rows: [string, string][] = [
    ["status", statusText(current, gone, fleet !== null)],
    ...(attention === null ? [] : [
      [
        "attention",
        paint(`${attentionText(attention)} since ${attention.since}`, "red"),
      ] as [string, string],
      ["", attention.detail] as [string, string],
    ]),
    [
      "prompt",
      current.prompt_id === null
        ? "-"
        : `${current.prompt_id}${
          current.prompt_name ? ` — ${current.prompt_name}` : ""
        }`,
    ],
    ["attempt", `${current.attempt ?? "-"} (${current.mode ?? "-"})`],
    ["provider", `${current.provider ?? "-"} / ${current.model ?? "-"}`],
    [
      "elapsed",
      `${duration(current.elapsed_ms)} run, ${
        duration(current.prompt_elapsed_ms)
      } this prompt`,
    ],
    ["tools", String(current.tool_count)],
    [
      "tokens",
      `${current.input_tokens} in / ${current.output_tokens} out${
        current.cost_usd === null ? "" : `, $${current.cost_usd.toFixed(4)}`
      }`,
    ],
    ...(current.budget === null ? [] : [[
      "budget",
      current.budget.map((b) =>
        b.spent > b.limit ? paint(spendingText(b), "red") : spendingText(b)
      ).join(" · "),
    ] as [string, string]]),
    ["events", `${current.event_count} (last seq ${current.last_seq})`],
    ["steers", `${current.steer_count}/${current.max_steers} for this prompt`],
    [
      "view",
      `log_mode=${current.view.log_mode} tool_output=${current.view.tool_output} thinking=${current.view.thinking} diff=${current.view.diff}`,
    ],
    [
      "updated",
      `${current.updated_at}${
        Number.isFinite(age) ? ` (${duration(age)} ago)` : ""
      }`,
    ],
  ];
  const lines = [
    "",
    `  ${paint(current.packet || "(packet)", "bold")}  ${
      paint(current.run_id, "dim")
    }`,
    "",
    ...rows.map(([label, value]) =>
      `  ${paint(label.padEnd(9), "dim")} ${value}`
    ),
    "",
  ];
  const text = lines.join("\n") + "\n";
  await context.stdout.write(terminalSafe(text, { style: context.color }));
  return 0;
}

/** `control status`. */
export const status = declareControl({
  about: `Usage: prompt_runner control status [TARGET] [options]

Shows a run's current state: status, prompt, attempt and mode, provider and
model, elapsed time, tool calls, tokens, events, steers, view, and when the
runner last wrote it. Reading never touches the run. TARGET is a workspace
id, a packet directory or a state root (default: the current directory,
else the workspace related to it).`,
  flags: {
    json: { type: "boolean", help: "Print the snapshot as one JSON line" },
  },
  footer: `Exit codes:
  0 ok   2 usage error   3 packet or run not found   4 snapshot unreadable`,
  target: "location",
  writes: "nothing",
  run: showStatus,
});
