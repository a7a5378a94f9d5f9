/**
 * The dashboard's access control (DESIGN §10): a random token per start,
 * given once in the URL and then kept in an `HttpOnly; SameSite=Strict`
 * cookie named after the port; requests only for a host the dashboard is
 * served at, and POSTs only from one of its own origins.
 *
 * @module
 */

/** The cookie that carries the token: one per port, so dashboards side by side keep theirs. */
export function cookieName(port: number): string {
  return `pr_token_${port}`;
}

/** Where a dashboard is served, and the cookie it reads. */
export interface Access {
  /** Its origins (`http://127.0.0.1:PORT`, …), in the order they are printed. */
  origins: readonly string[];
  /** The `Host` values it answers, in lower case. */
  hosts: ReadonlySet<string>;
  /** The name of its cookie. */
  cookie: string;
}

/** What a dashboard knows about where it can be reached. */
export interface Reach {
  /** The `--host` it was given (without brackets). */
  host: string;
  /** The port it listens on. */
  port: number;
  /** The addresses it really listens on (a loopback bind may add `::1`). */
  listening: readonly string[];
  /** This machine's own addresses (for a wildcard bind). */
  addresses: readonly string[];
  /** This machine's host name, when known. */
  hostname: string | null;
  /** The `--origin` URLs an operator added, as given. */
  extra: readonly string[];
}

/** Whether a host is a wildcard address (every interface). */
export function isWildcard(host: string): boolean {
  return host === "0.0.0.0" || host === "::";
}

function authority(host: string, port: number): string {
  const shown = host.includes(":") ? `[${host}]` : host;
  return `${shown}:${port}`.toLowerCase();
}

/**
 * The origin an `--origin` value names (`http(s)://HOST[:PORT]`, nothing
 * after), or `null` when it names none.
 */
export function originOf(given: string): string | null {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    return null;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return null;
  if (url.username !== "" || url.password !== "" || url.hostname === "") {
    return null;
  }
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return null;
  if (/[?#]/.test(given) || !/^https?:\/\/[^/]+\/?$/i.test(given)) return null;
  return url.origin.toLowerCase();
}

/**
 * The origins a dashboard answers as: the address it was given (printed
 * first), for a loopback bind `127.0.0.1`, `localhost` and `[::1]` (when it
 * listens there too), for a wildcard bind also this machine's addresses and
 * host name, then each `--origin`.
 */
export function accessOf(reach: Reach): Access {
  const wildcard = isWildcard(reach.host);
  const v4 = wildcard || reach.listening.includes("127.0.0.1");
  const v6 = reach.host === "::" || reach.listening.includes("::1");
  const names: string[] = [reach.host];
  if (v4) names.push("127.0.0.1");
  if (v4 || v6) names.push("localhost");
  if (v6) names.push("::1");
  if (wildcard) {
    if (reach.hostname) names.push(reach.hostname);
    for (const address of reach.addresses) {
      // A wildcard IPv4 bind cannot be reached at an IPv6 address.
      if (reach.host === "::" || !address.includes(":")) names.push(address);
    }
  }
  const origins: string[] = [];
  for (const name of names) {
    const origin = `http://${authority(name, reach.port)}`;
    if (!origins.includes(origin)) origins.push(origin);
  }
  for (const given of reach.extra) {
    const origin = originOf(given);
    if (origin !== null && !origins.includes(origin)) origins.push(origin);
  }
  const hosts = new Set<string>();
  for (const origin of origins) {
    const url = new URL(origin);
    hosts.add(url.host);
    // A proxy may spell out the default port.
    if (url.port === "") {
      hosts.add(`${url.host}:${url.protocol === "https:" ? 443 : 80}`);
    }
  }
  return { origins, hosts, cookie: cookieName(reach.port) };
}

/** Whether a request names a host the dashboard is served at (no DNS rebinding). */
export function knownHost(request: Request, access: Access): boolean {
  const host = request.headers.get("host");
  return host !== null && access.hosts.has(host.toLowerCase());
}

/** A new token: 32 random bytes, base64url without padding. */
export function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(
    /=+$/,
    "",
  );
}

/** Compares two strings in time that does not depend on where they differ. */
function sameText(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  // The token's length is no secret.
  if (left.length !== right.length) return false;
  let diff = 0;
  for (let i = 0; i < right.length; i++) diff |= left[i]! ^ right[i]!;
  return diff === 0;
}

/** The value of a cookie in a request, or `null`. */
function cookieValue(request: Request, name: string): string | null {
  const header = request.headers.get("cookie");
  if (header === null) return null;
  for (const part of header.split(";")) {
    const at = part.indexOf("=");
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/** What the token check decided. */
export type AuthResult =
  | { kind: "ok" }
  | { kind: "unauthorized" }
  | { kind: "set_cookie"; location: string };

/**
 * Checks a request's token: `?token=` (valid: set the cookie and redirect
 * to the same URL without it; invalid: 401), else the cookie.
 */
export function checkToken(
  request: Request,
  url: URL,
  token: string,
  cookieName: string,
): AuthResult {
  const given = url.searchParams.get("token");
  if (given !== null) {
    if (request.method !== "GET" || !sameText(given, token)) {
      return { kind: "unauthorized" };
    }
    const clean = new URL(url);
    clean.searchParams.delete("token");
    // A path on the dashboard: `//host/…` would send the browser away.
    const path = "/" + clean.pathname.replace(/^[/\\]+/, "");
    return { kind: "set_cookie", location: path + clean.search };
  }
  const cookie = cookieValue(request, cookieName);
  return cookie !== null && sameText(cookie, token)
    ? { kind: "ok" }
    : { kind: "unauthorized" };
}

/** The `Set-Cookie` value that keeps the token. */
export function tokenCookie(cookieName: string, token: string): string {
  return `${cookieName}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Whether a POST comes from one of the dashboard's origins (a missing Origin does not). */
export function sameOrigin(request: Request, access: Access): boolean {
  const origin = request.headers.get("origin");
  return origin !== null && access.origins.includes(origin.toLowerCase());
}
