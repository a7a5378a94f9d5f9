/**
 * The modules a confined worker starts on (DESIGN §11): a `data:` module
 * that imports, statically, everything the worker will run, since a
 * confined worker may not read the program's files to import one later
 * (a `data:` module's imports are loaded as the program's own).
 *
 * @module
 */

const WORKER = new URL("./_worker.ts", import.meta.url).href;
/**
 * The fleet code, and the NATS client it loads: a fleet command's worker
 * imports them with its entry (a confined worker may not read the
 * program's files to import them later); a command on files never loads
 * them.
 */
const FLEET_MODULES = [
  new URL("../../lib/fleet/mod.ts", import.meta.url).href,
  new URL("../../lib/fleet/_nats.ts", import.meta.url).href,
];

/**
 * The module a command's worker starts on: the one worker entry and the
 * command's module, both imported statically (a confined worker may not
 * read the program's files to import one later; a `data:` module's
 * imports are loaded as the program's own).
 */
export function workerModule(
  module: string,
  name: string,
  fleet: boolean,
): string {
  const preload = fleet
    ? FLEET_MODULES.map((url) => `import ${JSON.stringify(url)};\n`).join("")
    : "";
  const source = `${preload}import { serveControl } from ${
    JSON.stringify(WORKER)
  };
import { ${name} as declaration } from ${JSON.stringify(module)};
serveControl(declaration);
`;
  return `data:application/javascript,${encodeURIComponent(source)}`;
}

/**
 * The module a call's worker starts on for a fleet run: the fleet code
 * preloaded (as a fleet command's is), then the call's entry.
 */
export function fleetCallModule(entry: URL): string {
  const source = FLEET_MODULES.map((url) => `import ${JSON.stringify(url)};\n`)
    .join("") + `import ${JSON.stringify(entry.href)};\n`;
  return `data:application/javascript,${encodeURIComponent(source)}`;
}
