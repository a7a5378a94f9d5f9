/**
 * The dashboard's access control (DESIGN §10): a random token per start,
 * given once in the URL and then kept in an `HttpOnly; SameSite=Strict`
 * cookie; POSTs only from the dashboard's own origin.
 *
 * @module
 */

/** The cookie that carries the token. */
export const TOKEN_COOKIE = "pr_token";

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
): AuthResult {
  const given = url.searchParams.get("token");
  if (given !== null) {
    if (request.method !== "GET" || !sameText(given, token)) {
      return { kind: "unauthorized" };
    }
    const clean = new URL(url);
    clean.searchParams.delete("token");
    return {
      kind: "set_cookie",
      location: clean.pathname + clean.search,
    };
  }
  const cookie = cookieValue(request, TOKEN_COOKIE);
  return cookie !== null && sameText(cookie, token)
    ? { kind: "ok" }
    : { kind: "unauthorized" };
}

/** The `Set-Cookie` value that keeps the token. */
export function tokenCookie(token: string): string {
  return `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

/** Whether a POST comes from the dashboard itself (a missing Origin does not). */
export function sameOrigin(request: Request, origin: string): boolean {
  return request.headers.get("origin") === origin;
}
