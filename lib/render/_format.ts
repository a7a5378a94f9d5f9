/**
 * Small text helpers shared by the renderers.
 *
 * @module
 */

/** Collapses whitespace (newlines included) to single spaces and trims. */
export function flatten(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Cuts text to `max` characters, ending with `…` when cut. */
export function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, Math.max(0, max - 1)) + "…" : text;
}

/** A value as text: strings as they are, `{output}` maps unwrapped, the rest as JSON. */
export function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (
    typeof value === "object" && !Array.isArray(value) &&
    "output" in (value as Record<string, unknown>)
  ) {
    return asText((value as Record<string, unknown>).output);
  }
  return JSON.stringify(value) ?? String(value);
}

/** Splits text into lines; a final newline does not make an extra empty line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines.map((line) => line.replace(/\r$/, ""));
}

/** `1 line`, `3 lines`, `2 matches` (with the plural form given). */
export function plural(
  count: number,
  noun: string,
  nouns = `${noun}s`,
): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}

/** The marker that ends every cut body: `[truncated: N more lines]`. */
export function truncatedMarker(count: number): string {
  return `[truncated: ${plural(count, "more line")}]`;
}

/** Output size: `840 chars`, `1.4k chars`, `23k chars`. */
export function size(text: string): string {
  const n = text.length;
  if (n < 1000) return `${n} chars`;
  if (n < 10_000) return `${(n / 1000).toFixed(1)}k chars`;
  return `${Math.round(n / 1000)}k chars`;
}

/** A value for `key=value`: bare when plain, JSON-quoted otherwise (one line). */
export function kv(key: string, value: unknown): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return `${key}=null`;
  return typeof value === "string" && /^[\w./:@+-]+$/.test(value)
    ? `${key}=${value}`
    : `${key}=${typeof value === "string" ? JSON.stringify(value) : text}`;
}

/** A record's string field, or `undefined`. */
export function field(
  record: Record<string, unknown> | undefined,
  ...keys: string[]
): string | undefined {
  if (!record) return undefined;
  for (const key of keys) {
    const value = record[key];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

/** Shortens a long path: `first/.../second-last/last`. */
export function shortPath(path: string): string {
  if (path.length <= 60) return path;
  const parts = path.split("/");
  if (parts.length <= 3) return path;
  return `${parts[0]}/.../${parts.slice(-2).join("/")}`;
}
