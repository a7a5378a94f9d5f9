/**
 * The planter: plants links at the runner's own paths, pointing into the
 * canary directory.
 *
 * @module
 */

import { join, relative } from "node:path";
import { lstatOrNull } from "../../_audit/mod.ts";
import { sleep } from "../../_harness/mod.ts";
import { PROMPTS } from "../runs.ts";
import type { Fuzz } from "../state.ts";
import { errorText } from "../../../lib/shared/errors.ts";

async function holdsLink(dir: string): Promise<boolean> {
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isSymlink) return true;
  }
  return false;
}

/**
 * Plants a link at `path` (moving what is there to `saved/`), unless a
 * planted one is still there: a symbolic link, or with `hard` a hard link
 * to a canary file.
 */
async function plant(
  fuzz: Fuzz,
  path: string,
  target: string,
  hard = false,
): Promise<void> {
  // Never through a link planted earlier: that would write into the canary.
  let parent = fuzz.stateRoot;
  for (const part of relative(fuzz.stateRoot, path).split("/").slice(0, -1)) {
    parent = join(parent, part);
    const info = await lstatOrNull(parent);
    if (info === null || !info.isDirectory) return;
  }
  for (let tries = 0; tries < 5; tries++) {
    const info = await lstatOrNull(path);
    if (info?.isSymlink) return; // The last one is still waiting for the runner.
    if (info?.isFile && (info.nlink ?? 1) > 1) return; // So is a hard one.
    if (info?.isDirectory && await holdsLink(path)) {
      return; // Moving it would move a planted link the runner has not reached.
    }
    if (info !== null) {
      const aside = join(
        fuzz.saved,
        `${++fuzz.savedSeq}-${path.split("/").pop()}`,
      );
      try {
        await Deno.rename(path, aside);
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) continue;
        throw error;
      }
    }
    try {
      if (hard) {
        await Deno.link(target, path);
        fuzz.hardPlants.push({ path: relative(fuzz.stateRoot, path), target });
        return;
      }
      await Deno.symlink(target, path);
      fuzz.plants.push({ path: relative(fuzz.stateRoot, path), target });
      return;
    } catch (error) {
      // The runner made the file again in between: move that one too.
      if (!(error instanceof Deno.errors.AlreadyExists)) {
        if (error instanceof Deno.errors.NotFound) return; // Its directory is not there yet.
        throw error;
      }
    }
  }
}

export async function planter(fuzz: Fuzz): Promise<void> {
  const rng = fuzz.rng;
  while (!fuzz.stop) {
    await sleep(rng.int(200, 1200));
    const runId = fuzz.runId;
    if (runId === null || fuzz.stop) continue;
    const root = fuzz.stateRoot;
    const n = fuzz.plants.length;
    const fileTarget = rng.pick([
      join(fuzz.canary, "secret.txt"),
      join(fuzz.canary, "log.jsonl"),
      join(fuzz.canary, `missing-plant-${n}`),
      join(fuzz.canary, "dir"),
    ]);
    const dirTarget = rng.pick([
      join(fuzz.canary, "dir"),
      join(fuzz.canary, "empty"),
      join(fuzz.canary, `missing-plant-dir-${n}`),
    ]);
    const prompt = rng.pick(PROMPTS).id;
    const choices: [string, string][] = [
      [join(root, "control", "log.jsonl"), fileTarget],
      [join(root, "control", "outcomes"), dirTarget],
      [join(root, "control", "snapshot.json"), fileTarget],
      [join(root, "interventions", `${prompt}.jsonl`), fileTarget],
      [join(root, "logs", runId, `${prompt}-attempt-1.log`), fileTarget],
      [join(root, "logs", runId), dirTarget],
    ];
    if (rng.chance(0.15)) {
      // A hard link is no symbolic link: only the canary can tell whether the
      // runner writes through it.
      const [path] = rng.pick([choices[0]!, choices[3]!]);
      try {
        await plant(fuzz, path, join(fuzz.canary, "hardlink-target.txt"), true);
      } catch (error) {
        fuzz.violations.add(
          "harness",
          `planting a hard link at ${path}: ${errorText(error)}`,
        );
      }
      continue;
    }
    const [path, target] = rng.pick(choices);
    try {
      await plant(fuzz, path, target);
    } catch (error) {
      fuzz.violations.add(
        "harness",
        `planting ${path}: ${errorText(error)}`,
      );
    }
  }
}
