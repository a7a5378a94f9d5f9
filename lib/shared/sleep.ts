/**
 * An abortable sleep.
 *
 * @module
 */

/**
 * Resolves after `ms` milliseconds, or as soon as `signal` aborts (without
 * throwing). A zero delay resolves at once.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 || signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
