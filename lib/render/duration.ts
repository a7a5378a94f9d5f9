/**
 * The one way a duration is written for people, everywhere: the CLI's
 * renderers, `status`, `control status` and the dashboard (server and page).
 * Plain code with no Deno and no DOM, so the dashboard's page is built from
 * it too.
 *
 * @module
 */

/**
 * A duration for people: `850ms`, `4s`, `12.5s`, `6m52s`, `1h02m` (tenths of
 * a second under a minute, a trailing `.0` dropped; a negative one is `0ms`).
 */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1).replace(/\.0$/, "")}s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) {
    return `${minutes}m${
      String(Math.floor((ms % 60_000) / 1000)).padStart(2, "0")
    }s`;
  }
  return `${Math.floor(minutes / 60)}h${
    String(minutes % 60).padStart(2, "0")
  }m`;
}
