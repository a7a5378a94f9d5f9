/**
 * Where runs live: packet directories, state roots and run refs, resolved in
 * one place for every command and the runner; operator workspaces (their
 * file, external state roots and registry).
 *
 * @module
 */

export {
  defaultStateRoot,
  locateRunTarget,
  type PacketRunLocation,
  plainLocation,
  type RunLocation,
  type RunTarget,
  runTargetOf,
  STATE_DIR_NAME,
} from "./run_location.ts";
export {
  isPacketDir,
  type LocationNeed,
  resolveRunLocation,
  type ResolveRunLocationOptions,
} from "./resolve_run_location.ts";
export {
  defaultWorkspaceRoot,
  registryFile,
  stateHome,
  type StateHomeOptions,
} from "./state_home.ts";
export {
  isWorkspaceId,
  loadWorkspaceFile,
  WORKSPACE_ID,
  type WorkspaceFile,
} from "./workspace_file.ts";
export {
  lookupWorkspace,
  readRegistry,
  readStateRootTag,
  type Registry,
  STATE_ROOT_TAG,
  type StateRootTag,
} from "./registry.ts";
export {
  forgetWorkspace,
  type ForgottenWorkspace,
} from "./forget_workspace.ts";
export {
  listWorkspaces,
  type PreparedWorkspace,
  prepareWorkspace,
  type PrepareWorkspaceOptions,
  type WorkspaceEntry,
} from "./prepare_workspace.ts";
export {
  checkStateRootSite,
  type StateRootSiteOptions,
  type StateRootSource,
} from "./check_state_root_site.ts";
export { isStateRoot, relatedWorkspaces } from "./workspace_location.ts";
export { applyRepoOverrides } from "./apply_repo_overrides.ts";
export {
  locateTarget,
  type LocateTargetOptions,
  type TargetLocation,
} from "./locate_target.ts";
