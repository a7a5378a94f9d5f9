/**
 * The dashboard's responses: every one with the security headers (the
 * strict Content-Security-Policy of DESIGN §10 among them), whatever its
 * kind, and an action's form read no further than its limit.
 *
 * @module
 */

import { messagePage } from "./_pages.ts";

/** The Content-Security-Policy of every response (DESIGN §10). */
export const CSP = "default-src 'self'; script-src 'self'; " +
  "style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; " +
  "object-src 'none'";

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

/** The content types the dashboard answers with. */
export const HTML = "text/html; charset=utf-8";
export const JSON_TYPE = "application/json; charset=utf-8";
export const TEXT = "text/plain; charset=utf-8";

/** A response with the security headers. */
export function respond(
  body: BodyInit | null,
  status: number,
  headers: Record<string, string> = {},
): Response {
  return new Response(body, {
    status,
    headers: { ...SECURITY_HEADERS, ...headers },
  });
}

export function page(html: string, status = 200): Response {
  return respond(html, status, { "content-type": HTML });
}

export function json(value: unknown, status = 200): Response {
  return respond(JSON.stringify(value), status, {
    "content-type": JSON_TYPE,
  });
}

export function notFound(
  message = "There is nothing at this address.",
): Response {
  return page(messagePage("Not found", message), 404);
}

export function text(message: string, status: number): Response {
  return respond(`${message}\n`, status, { "content-type": TEXT });
}

/** The server's own refusals (400, 408, 503…): text with the security headers. */
export function refusal(status: number, message: string): Response {
  return text(message, status);
}

export function notAllowed(allow: string): Response {
  return respond(`Method not allowed: use ${allow}\n`, 405, {
    "content-type": TEXT,
    allow,
  });
}

/** Thrown when a form is larger than its action allows. */
export class TooLarge extends Error {}

/**
 * An action's form, read as it streams and refused as soon as it passes
 * `limit` (a declared length over it is refused before a byte is read).
 */
export async function readForm(
  request: Request,
  limit: number,
): Promise<Request> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) throw new TooLarge();
  const parts: Uint8Array[] = [];
  let size = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > limit) throw new TooLarge();
        parts.push(value);
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }
  const body = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    body.set(part, at);
    at += part.length;
  }
  return new Request(request.url, {
    method: request.method,
    headers: request.headers,
    body,
  });
}
