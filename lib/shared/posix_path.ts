/**
 * POSIX path operations with `node:path`'s results, for the modules a quick
 * command loads: the first `node:` module a process evaluates starts Node's
 * compatibility layer, which costs more than the whole of `control status`.
 * The runner is POSIX-only (it reads `/proc`, signals process groups), so
 * POSIX paths are all it needs. Written here from the operations' behaviour; a
 * test compares each with `node:path`'s on thousands of generated paths.
 *
 * @module
 */

/** The segments of a path with `.` and `..` resolved (`..` kept above a relative start). */
function resolveSegments(path: string, absolute: boolean): string[] {
  const out: string[] = [];
  for (const segment of path.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment !== "..") out.push(segment);
    else if (out.length > 0 && out.at(-1) !== "..") out.pop();
    else if (!absolute) out.push("..");
  }
  return out;
}

/** Tells whether a path is absolute (starts with `/`). */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

/** Normalises a path: `.` and `..` resolved, repeated slashes made one. */
export function normalize(path: string): string {
  if (path === "") return ".";
  const absolute = isAbsolute(path);
  const trailing = path.endsWith("/");
  const body = resolveSegments(path, absolute).join("/");
  if (body === "") return absolute ? "/" : trailing ? "./" : ".";
  return `${absolute ? "/" : ""}${body}${trailing ? "/" : ""}`;
}

/** Joins path segments and normalises the result. */
export function join(...paths: string[]): string {
  const parts = paths.filter((path) => path !== "");
  return parts.length === 0 ? "." : normalize(parts.join("/"));
}

/**
 * Resolves segments right to left into an absolute path; the current
 * directory completes a relative one.
 */
export function resolve(...paths: string[]): string {
  const parts: string[] = [];
  for (let i = paths.length - 1; i >= -1; i--) {
    const path = i >= 0 ? paths[i]! : Deno.cwd();
    if (path === "") continue;
    parts.unshift(path);
    if (isAbsolute(path)) break;
  }
  const absolute = parts.length > 0 && isAbsolute(parts[0]!);
  const body = resolveSegments(parts.join("/"), absolute).join("/");
  if (absolute) return `/${body}`;
  return body === "" ? "." : body;
}

/** The directory part of a path. */
export function dirname(path: string): string {
  if (path === "") return ".";
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  const cut = path.lastIndexOf("/", end - 1);
  if (cut === -1) return ".";
  if (cut === 0) return "/";
  // Like node: a path that starts with exactly "//x" keeps both slashes.
  if (cut === 1 && path[0] === "/") return "//";
  return path.slice(0, cut);
}

/** The last part of a path, without trailing slashes. */
export function basename(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
}

/** The path from `from` to `to`, both resolved first. */
export function relative(from: string, to: string): string {
  const a = resolve(from).split("/").filter((s) => s !== "");
  const b = resolve(to).split("/").filter((s) => s !== "");
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) {
    common++;
  }
  return [...a.slice(common).map(() => ".."), ...b.slice(common)].join("/");
}
