/**
 * Fleets (DESIGN §12): runs on many machines watched and steered from one
 * place through NATS JetStream. A runner's (or a sidecar's) bridge
 * publishes a run's state-root files to the fleet and hands the fleet's
 * requests to the run's plane; clients read and steer fleet runs through
 * the client API with the fleet transport.
 *
 * Nothing here loads the NATS client until a fleet is used.
 *
 * @module
 */

export {
  type FleetClient,
  type FleetClientOptions,
  type FleetRun,
  openFleetClient,
} from "./fleet_client.ts";
export type { FleetRunState } from "./_fleet_follow.ts";
export type { FleetPromptStatus, FleetStatus } from "./fleet_status.ts";
export {
  FleetTransport,
  type FleetTransportOptions,
  STALE_MS,
} from "./fleet_transport.ts";
export {
  Bridge,
  type BridgeFault,
  type BridgeOptions,
  type BridgeProgress,
  type BridgeReport,
} from "./bridge.ts";
export { type RunBridge, startRunBridge } from "./run_bridge.ts";
export {
  type FleetUrl,
  maskFleetSecrets,
  parseFleetUrl,
  readCredsFile,
} from "./fleet_url.ts";
export {
  contractKey,
  CONTRACTS_BUCKET,
  EVENTS_STREAM,
  eventsSubject,
  FLEET_PREFIX,
  fleetAddress,
  type FleetRunName,
  isFleetTarget,
  LOG_STREAM,
  logSubject,
  nodeName,
  REQUESTS_STREAM,
  requestSubject,
  rootName,
  runName,
  RUNS_BUCKET,
  sanitizeName,
} from "./fleet_names.ts";
