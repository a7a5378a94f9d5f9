/**
 * A fleet's address (DESIGN §12): `nats://[user:pass@]host:port[,host:port…]`
 * or `tls://…`, its credentials, and the same address with every secret
 * masked, which is the only form a message, a log or `run.lock` ever shows.
 *
 * @module
 */

import { errorText, StateError, UsageError } from "../shared/errors.ts";

/** A parsed fleet address. */
export interface FleetUrl {
  /** The servers, each `scheme://host:port` without credentials. */
  servers: string[];
  /** `host:port` of each server: what a confined worker may connect to. */
  hosts: string[];
  /** Whether the servers are reached over TLS (`tls://`). */
  tls: boolean;
  /** The user name, when the URL names one. */
  user?: string;
  /** The password, when the URL has one. */
  pass?: string;
  /** The token, when the URL's credentials are a token alone. */
  token?: string;
  /** The address with its secrets masked, for messages. */
  shown: string;
}

const DEFAULT_PORT = 4222;
const MASK = "***";

/** `host:port`, `[v6]:port`, or a host alone. */
const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?$/;

function invalid(shown: string, detail: string): never {
  throw new UsageError(`Invalid fleet URL "${shown}": ${detail}`, {
    code: "BAD_FLEET_URL",
    hint:
      "Name it as nats://[user:pass@]host:port[,host:port…] or tls://… (PROMPT_RUNNER_FLEET works too)",
  });
}

/**
 * Masks every secret in a fleet address, whatever its shape: the password
 * of `user:pass@`, a token `token@`, and a `?…` query. Also applied to any
 * text that quotes the address (a server's error message).
 */
export function maskFleetSecrets(text: string): string {
  return text
    .replace(
      /([a-z][a-z0-9+.-]*:\/\/)([^@\s/,]*)@/gi,
      (_all, scheme: string, auth: string) => {
        const colon = auth.indexOf(":");
        return colon < 0
          ? `${scheme}${MASK}@`
          : `${scheme}${auth.slice(0, colon)}:${MASK}@`;
      },
    )
    // A server after the first one with credentials of its own (refused,
    // and never shown either).
    .replace(/(^|[,\s])([^@\s/,:]+):([^@\s/,]*)@/g, `$1$2:${MASK}@`)
    .replace(/([?&](?:pass(?:word)?|token|auth)=)[^&\s]*/gi, `$1${MASK}`);
}

function decoded(part: string, shown: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return invalid(shown, "its credentials are not valid percent-encoding");
  }
}

/**
 * Parses a fleet address. Credentials may come only with the first server;
 * the others take the same ones.
 *
 * @example Secrets never reach `shown`
 * ```ts
 * import { parseFleetUrl } from "./fleet_url.ts";
 * import assert from "node:assert/strict";
 *
 * const url = parseFleetUrl("nats://ops:s3cret@10.0.0.5:4222,10.0.0.6");
 * assert.deepEqual(url.hosts, ["10.0.0.5:4222", "10.0.0.6:4222"]);
 * assert.equal(url.pass, "s3cret");
 * assert.equal(url.shown, "nats://ops:***@10.0.0.5:4222,10.0.0.6:4222");
 * ```
 *
 * @throws {UsageError} for anything that is not such an address.
 */
export function parseFleetUrl(text: string): FleetUrl {
  const shownInput = maskFleetSecrets(text.trim());
  const given = text.trim();
  if (given === "") invalid(shownInput, "it is empty");
  const match = /^(nats|tls):\/\/(.*)$/i.exec(given);
  if (match === null) {
    invalid(shownInput, "it must start with nats:// or tls://");
  }
  const scheme = match[1]!.toLowerCase();
  let rest = match[2]!;
  const url: FleetUrl = {
    servers: [],
    hosts: [],
    tls: scheme === "tls",
    shown: "",
  };
  const at = rest.lastIndexOf(
    "@",
    rest.indexOf(",") < 0 ? undefined : rest.indexOf(","),
  );
  if (at >= 0) {
    const auth = rest.slice(0, at);
    rest = rest.slice(at + 1);
    const colon = auth.indexOf(":");
    if (colon < 0) {
      if (auth === "") {
        invalid(shownInput, "the credentials before @ are empty");
      }
      url.token = decoded(auth, shownInput);
    } else {
      const user = decoded(auth.slice(0, colon), shownInput);
      if (user === "") invalid(shownInput, "the user name is empty");
      url.user = user;
      url.pass = decoded(auth.slice(colon + 1), shownInput);
    }
  }
  for (let part of rest.split(",")) {
    part = part.trim().replace(/^(nats|tls):\/\//i, (_all, s: string) => {
      if (s.toLowerCase() !== scheme) {
        invalid(shownInput, "its servers mix nats:// and tls://");
      }
      return "";
    }).replace(/\/+$/, "");
    if (part.includes("@")) {
      invalid(shownInput, "credentials may come only before the first server");
    }
    const hostPort = HOST_PORT.exec(part);
    if (hostPort === null) {
      invalid(
        shownInput,
        `${JSON.stringify(part)} is not host:port`,
      );
    }
    const port = hostPort[2] === undefined ? DEFAULT_PORT : Number(hostPort[2]);
    if (!(port >= 1 && port <= 65_535)) {
      invalid(shownInput, `port ${hostPort[2]} is out of range`);
    }
    const host = hostPort[1]!;
    url.hosts.push(`${host}:${port}`);
    url.servers.push(`${scheme}://${host}:${port}`);
  }
  const auth = url.token !== undefined
    ? `${MASK}@`
    : url.user !== undefined
    ? `${encodeURIComponent(url.user)}${
      url.pass === undefined ? "" : `:${MASK}`
    }@`
    : "";
  url.shown = `${scheme}://${auth}${url.hosts.join(",")}`;
  return url;
}

/** A NATS creds file's text, checked to be one (never shown). */
export async function readCredsFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    throw new StateError(
      `Cannot read the fleet creds file "${path}": ${errorText(error)}`,
      { code: "FLEET_CREDS_UNREADABLE" },
    );
  }
  if (
    !/-----BEGIN NATS USER JWT-----/.test(text) ||
    !/-----BEGIN USER NKEY SEED-----/.test(text)
  ) {
    throw new UsageError(
      `The fleet creds file "${path}" is not a NATS creds file: it needs a user JWT and an nkey seed`,
      { code: "BAD_FLEET_CREDS" },
    );
  }
  return text;
}
