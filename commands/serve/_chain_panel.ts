/**
 * The control log's word on its own audit trail: whether the hash chains
 * hold (`control log --verify`, run when the page is built), or the first
 * line that does not. Every text escaped: a finding quotes the log.
 *
 * @module
 */

import type { LogVerification } from "../../mod.ts";
import { el, esc } from "./_html.ts";

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? "" : "s"}`;
}

/**
 * The chain's line for the control log panel (`.chain`, `data-chain`
 * `holds` or `broken`); nothing for a run whose files are on another
 * machine (`null`: its trail is checked there).
 */
export function chainHtml(chain: LogVerification | null): string {
  if (chain === null) return "";
  const lines = chain.files.reduce((sum, file) => sum + file.lines, 0);
  const checked = `${plural(lines, "line")}, ${
    plural(chain.receipts, "receipt")
  }, ${plural(chain.amendments, "amendment")} checked`;
  const first = chain.problems[0];
  if (first === undefined) {
    const torn = chain.notes.filter((n) => n.kind === "torn").length;
    return el(
      "p",
      { class: "chain", "data-chain": "holds", title: "control log --verify" },
      esc(
        `✓ The audit chain holds: ${checked}${
          torn > 0
            ? ` · ${
              plural(torn, "torn line")
            } (a crash mid-write, not tampering)`
            : ""
        }`,
      ),
    );
  }
  return el(
    "p",
    {
      class: "chain",
      "data-chain": "broken",
      "data-file": first.file,
      "data-line": first.line,
      "data-kind": first.kind,
      title: "control log --verify",
    },
    esc(
      `✗ The audit chain does not hold: ${first.file}${
        first.line === null ? "" : ` line ${first.line}`
      } (${first.kind}): ${first.message}${
        chain.problems.length > 1
          ? ` · ${plural(chain.problems.length - 1, "more problem")}`
          : ""
      }`,
    ),
  );
}
