/**
 * Delivering a notification to a webhook: the event as a JSON POST, each
 * try bounded by a time limit, retried with a doubling backoff after a
 * network error, a timeout, a 5xx, 408 or 429 (another 4xx is the
 * receiver's final word).
 *
 * @module
 */

import { errorText } from "../shared/errors.ts";
import { sleep } from "../shared/sleep.ts";
import { VERSION } from "../shared/version.ts";
import { type DeliveryResult, oneLine } from "./_delivery.ts";

/** What {@linkcode deliverWebhook} sends, and how hard it tries. */
export interface WebhookDelivery {
  /** The URL. */
  url: string;
  /** The URL as messages may show it (no secrets). */
  shown: string;
  /** The JSON body. */
  body: string;
  /** The time limit of each try. */
  timeoutMs: number;
  /** Tries after the first. */
  retries: number;
  /** The pause before the first retry; each next one doubles it. */
  backoffMs: number;
  /** Aborted (with a reason string) when the run stops waiting for it. */
  signal: AbortSignal;
}

function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

function tries(count: number): string {
  return count === 1 ? "1 try" : `${count} tries`;
}

/** An error's text without the URL (a fetch error quotes it, secrets and all). */
function scrubbed(error: unknown, delivery: WebhookDelivery): string {
  let text = errorText(error);
  for (const form of new Set([delivery.url, new URL(delivery.url).href])) {
    text = text.replaceAll(form, delivery.shown);
  }
  return oneLine(text);
}

/**
 * POSTs the body until the receiver takes it (a 2xx), gives a final
 * refusal, the tries run out, or `signal` aborts. Never throws.
 *
 * Requires `--allow-net` permission for the URL's host.
 */
export async function deliverWebhook(
  delivery: WebhookDelivery,
): Promise<DeliveryResult> {
  let last = "not tried";
  let count = 0;
  for (let attempt = 0; attempt <= delivery.retries; attempt++) {
    if (attempt > 0) {
      await sleep(delivery.backoffMs * 2 ** (attempt - 1), delivery.signal);
    }
    if (delivery.signal.aborted) break;
    count++;
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(), delivery.timeoutMs);
    try {
      const response = await fetch(delivery.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": `prompt_runner/${VERSION}`,
        },
        body: delivery.body,
        signal: AbortSignal.any([limit.signal, delivery.signal]),
      });
      await response.body?.cancel().catch(() => {});
      if (response.ok) {
        return { ok: true, note: `HTTP ${response.status} (${tries(count)})` };
      }
      last = `HTTP ${response.status}`;
      if (!retryable(response.status)) break;
    } catch (error) {
      if (delivery.signal.aborted) break;
      last = limit.signal.aborted
        ? `no answer within ${delivery.timeoutMs} ms`
        : scrubbed(error, delivery);
    } finally {
      clearTimeout(timer);
    }
  }
  const after = `${last} (${tries(count)})`;
  return {
    ok: false,
    reason: delivery.signal.aborted
      ? `${String(delivery.signal.reason)}; last: ${after}`
      : after,
  };
}
