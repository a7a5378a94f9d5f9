import assert from "node:assert/strict";
import {
  STATE_ROOT_ENTRIES,
  STATE_ROOT_NAMES,
  stateRootPaths,
} from "../../../lib/shared/state_root_layout.ts";
import { controlPaths } from "../../../lib/control/paths.ts";
import { LOCK_FILE } from "../../../lib/shared/run_lock.ts";
import { STATE_FILE } from "../../../lib/status/state_file.ts";
import { STATE_ROOT_TAG } from "../../../lib/workspace/registry.ts";

Deno.test("stateRootPaths() names every entry of a state root as DESIGN §5 lays it out", () => {
  const root = "/srv/pr/ops";
  assert.deepEqual(stateRootPaths(root), {
    root,
    dir: `${root}/control`,
    requests: `${root}/control/requests`,
    outcomes: `${root}/control/outcomes`,
    log: `${root}/control/log.jsonl`,
    snapshot: `${root}/control/snapshot.json`,
    events: `${root}/control/events.jsonl`,
    archive: `${root}/control/events`,
    interventions: `${root}/interventions`,
    amendments: `${root}/amendments`,
    lock: `${root}/run.lock`,
    state: `${root}/state.json`,
    tag: `${root}/state_root.json`,
    logs: `${root}/logs`,
    tmp: `${root}/tmp`,
  });
  assert.deepEqual(controlPaths(root), stateRootPaths(root));
});

Deno.test("the lock, the state file and the tag take their names from the layout, and the entries list names each top entry once", () => {
  assert.equal(LOCK_FILE, STATE_ROOT_NAMES.lock);
  assert.equal(STATE_FILE, STATE_ROOT_NAMES.state);
  assert.equal(STATE_ROOT_TAG, STATE_ROOT_NAMES.tag);
  assert.deepEqual(
    Object.keys(STATE_ROOT_ENTRIES).sort(),
    Object.values(STATE_ROOT_NAMES).sort(),
  );
});
