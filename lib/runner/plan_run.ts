/**
 * Planning a run: which prompts, in what order, on which providers.
 *
 * @module
 */

import type { Packet, PromptSpec } from "../packet/load_packet.ts";
import { normalizePromptId } from "../packet/load_packet.ts";
import { getProvider } from "../providers/get_provider.ts";
import type { Provider } from "../providers/provider.ts";
import { isSimulatedProvider } from "../providers/simulated.ts";
import { NotFoundError, UsageError } from "../shared/errors.ts";
import { rootRefusal } from "../packet/agent_options.ts";

function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}
import { isDirectory } from "../shared/files.ts";

/** A prompt with the provider and model it will run on. */
export interface PlannedPrompt {
  /** The prompt. */
  prompt: PromptSpec;
  /** The provider running it. */
  provider: Provider;
  /** The model shown (the provider's default when none is named). */
  model: string;
  /** The model the run or packet names, or `null` for the agent's own default. */
  requested_model: string | null;
}

/** Options for {@linkcode planRun}. */
export interface PlanOptions {
  /** Prompt ids to run, in order; all prompts when absent or empty. */
  ids?: string[];
  /** A provider for every prompt, replacing the packet's. */
  provider?: string;
  /** A model for every prompt, replacing the packet's. */
  model?: string;
}

/**
 * Selects and orders the prompts of a run. Explicit ids keep their order,
 * except that a selected prompt always runs after the selected prompts it
 * depends on.
 *
 * @throws {NotFoundError} for an unknown id or a missing repo directory.
 * @throws {UsageError} for a dependency cycle, an unavailable provider or a
 * malformed provider script.
 */
export async function planRun(
  packet: Packet,
  options: PlanOptions = {},
): Promise<PlannedPrompt[]> {
  const byId = new Map(packet.prompts.map((prompt) => [prompt.id, prompt]));
  let selected: PromptSpec[];
  if (options.ids && options.ids.length > 0) {
    selected = [];
    for (const raw of options.ids) {
      const id = normalizePromptId(raw);
      const prompt = id === null ? undefined : byId.get(id);
      if (prompt === undefined) {
        throw new NotFoundError(
          `Unknown prompt id "${raw}": the packet has ${
            [...byId.keys()].join(", ")
          }`,
          { code: "PROMPT_NOT_FOUND" },
        );
      }
      if (!selected.includes(prompt)) selected.push(prompt);
    }
  } else {
    selected = [...packet.prompts];
  }
  const ordered: PromptSpec[] = [];
  const visiting = new Set<string>();
  const chosen = new Set(selected.map((prompt) => prompt.id));
  const visit = (prompt: PromptSpec, path: string[]): void => {
    if (ordered.includes(prompt)) return;
    if (visiting.has(prompt.id)) {
      throw new UsageError(
        `Invalid packet "${packet.dir}": prompts depend on each other in a cycle (${
          [...path, prompt.id].join(" -> ")
        })`,
        { code: "INVALID_PACKET" },
      );
    }
    visiting.add(prompt.id);
    for (const dep of prompt.depends_on) {
      const other = byId.get(dep);
      if (other && chosen.has(dep)) visit(other, [...path, prompt.id]);
      else if (other) detectCycle(other, [...path, prompt.id]);
    }
    visiting.delete(prompt.id);
    ordered.push(prompt);
  };
  const detectCycle = (prompt: PromptSpec, path: string[]): void => {
    if (path.includes(prompt.id)) {
      throw new UsageError(
        `Invalid packet "${packet.dir}": prompts depend on each other in a cycle (${
          [...path, prompt.id].join(" -> ")
        })`,
        { code: "INVALID_PACKET" },
      );
    }
    for (const dep of prompt.depends_on) {
      const other = byId.get(dep);
      if (other) detectCycle(other, [...path, prompt.id]);
    }
  };
  for (const prompt of selected) visit(prompt, []);
  const planned: PlannedPrompt[] = [];
  for (const prompt of ordered) {
    let provider = getProvider(options.provider ?? prompt.provider);
    const refusal = rootRefusal(
      provider.name,
      prompt.agent,
      currentUid(),
      { IS_SANDBOX: Deno.env.get("IS_SANDBOX") },
    );
    if (refusal !== null) {
      throw new UsageError(
        `Cannot run prompt ${prompt.id} as root: ${refusal}`,
        {
          code: "INVALID_PACKET",
        },
      );
    }
    if (isSimulatedProvider(provider)) {
      const problem = provider.checkScript(prompt.simulate);
      if (problem !== null) {
        throw new UsageError(
          `Invalid simulate script in "${prompt.file}": ${problem}`,
          { code: "INVALID_PACKET" },
        );
      }
      provider = provider.withScript(prompt.simulate);
    }
    const dirs = [
      prompt.cwd,
      ...prompt.targets.map((name) =>
        packet.repos.find((repo) => repo.name === name)!.path
      ),
    ];
    for (const dir of new Set(dirs)) {
      if (!(await isDirectory(dir))) {
        const repo = packet.repos.find((r) => r.path === dir);
        throw new NotFoundError(
          `Cannot run prompt ${prompt.id}: ${
            repo ? `repo "${repo.name}" directory` : "directory"
          } "${dir}" does not exist`,
          {
            code: "REPO_NOT_FOUND",
            hint: "Create it, or fix repos: in the manifest",
          },
        );
      }
    }
    planned.push({
      prompt,
      provider,
      model: options.model ?? prompt.model ?? provider.defaultModel,
      requested_model: options.model ?? prompt.model,
    });
  }
  return planned;
}
