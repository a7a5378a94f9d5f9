/**
 * Front matter: the YAML block that opens a manifest or prompt file. This is
 * the only file that imports the YAML parser.
 *
 * @module
 */

import YAML from "yaml";
import { UsageError } from "../shared/errors.ts";

/** A Markdown file split into its front matter and its body. */
export interface FrontMatter {
  /** The front matter as a mapping (`{}` when the file has none). */
  attributes: Record<string, unknown>;
  /** Everything after the closing `---` line. */
  body: string;
  /** Whether the file opened with a front matter block. */
  present: boolean;
}

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*(?:\r?\n|$)/m;

/** Describes a YAML error at its line in the file (the block starts on line 2). */
function yamlProblem(error: InstanceType<typeof YAML.YAMLError>): string {
  const where = error.linePos?.[0];
  const first = error.message.split("\n")[0] ?? error.message;
  const text = first.replace(/ at line \d+, column \d+:?$/, "");
  return where ? `line ${where.line + 1}: ${text}` : text;
}

/**
 * Splits a Markdown file into its YAML front matter and its body. A file that
 * does not start with a `---` line has no front matter: its attributes are
 * `{}` and all of it is the body.
 *
 * @param text The file's content.
 * @param file The file's path, named in errors.
 * @returns The attributes, the body, and whether front matter was present.
 * @throws {UsageError} when the block is not closed, is not valid YAML, or is
 * not a mapping.
 */
export function parseFrontMatter(text: string, file: string): FrontMatter {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const open = OPEN.exec(source);
  if (!open) return { attributes: {}, body: source, present: false };
  const rest = source.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) {
    throw new UsageError(
      `Invalid front matter in "${file}": the opening --- line has no closing --- line`,
      { code: "INVALID_PACKET" },
    );
  }
  const yaml = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length);
  let value: unknown;
  try {
    value = YAML.parse(yaml, { prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    // Anything but a YAML error (a missing permission) is not the file's fault.
    if (!(error instanceof YAML.YAMLError)) throw error;
    throw new UsageError(
      `Invalid YAML front matter in "${file}": ${yamlProblem(error)}`,
      { code: "INVALID_PACKET" },
    );
  }
  if (value === null || value === undefined) {
    return { attributes: {}, body, present: true };
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    const kind = Array.isArray(value) ? "a list" : `a ${typeof value}`;
    throw new UsageError(
      `Invalid front matter in "${file}": expected a mapping of keys, found ${kind}`,
      { code: "INVALID_PACKET" },
    );
  }
  return { attributes: value as Record<string, unknown>, body, present: true };
}

/**
 * Sets or removes one top-level key of a file's front matter. Only that key's
 * lines change: every other byte of the file (other keys, comments, the body,
 * line endings) stays as it was.
 *
 * @param text The file's content.
 * @param key The top-level key to set.
 * @param value The new value; `undefined` removes the key.
 * @param file The file's path, named in errors.
 * @returns The new file content.
 * @throws {UsageError} when the file has no front matter.
 */
export function setFrontMatterKey(
  text: string,
  key: string,
  value: unknown,
  file: string,
): string {
  const bom = text.startsWith("\uFEFF") ? 1 : 0;
  const source = text.slice(bom);
  const open = OPEN.exec(source);
  const close = open ? CLOSE.exec(source.slice(open[0].length)) : null;
  if (!open || !close) {
    throw new UsageError(`Cannot edit "${file}": it has no front matter`, {
      code: "INVALID_PACKET",
    });
  }
  const start = bom + open[0].length;
  const end = start + close.index;
  const block = text.slice(start, end);
  const newline = open[0].endsWith("\r\n") ? "\r\n" : "\n";
  const lines = block.split(/(?<=\n)/);
  const keyLine = new RegExp(
    `^(?:${key.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}|"${key}"|'${key}')\\s*:`,
  );
  let first = lines.findIndex((line) => keyLine.test(line));
  let last = first;
  if (first >= 0) {
    // The key's value runs on while lines are indented, blank or comments.
    while (
      last + 1 < lines.length && /^(?:[ \t]|\r?\n|$)/.test(lines[last + 1]!)
    ) {
      last++;
    }
    // Trailing blank lines belong to the gap before the next key.
    while (last > first && /^\s*$/.test(lines[last]!)) last--;
  } else {
    first = last = lines.length;
  }
  let replacement = "";
  if (value !== undefined) {
    replacement = YAML.stringify({ [key]: value }, {
      lineWidth: 0,
      flowCollectionPadding: false,
    }).replace(/\n/g, newline);
  }
  if (first === lines.length && block !== "" && !block.endsWith("\n")) {
    replacement = newline + replacement;
  }
  const next = [
    ...lines.slice(0, first),
    replacement,
    ...lines.slice(last + 1),
  ].join("");
  return text.slice(0, start) + next + text.slice(end);
}

/** A YAML document parsed by {@linkcode parseYamlFile}. */
export interface YamlFile {
  /** The document's value (`null` for an empty document). */
  value: unknown;
  /**
   * The 1-based line of a key, given its path from the top mapping
   * (`["repos", "app"]`), or `undefined` when the key is not there.
   */
  lineOf(path: readonly string[]): number | undefined;
}

/**
 * Parses a whole YAML file (duplicate keys refused) and keeps where each key
 * is, so that errors about a value can name its line.
 *
 * @param text The file's content.
 * @param file The file's path, named in errors.
 * @param describe How errors name the file (`workspace file`).
 * @throws {UsageError} (`INVALID_YAML`) naming the file and line when it is
 * not valid YAML.
 */
export function parseYamlFile(
  text: string,
  file: string,
  describe = "YAML file",
): YamlFile {
  const source = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(source, {
    prettyErrors: true,
    uniqueKeys: true,
    lineCounter,
  });
  const error = doc.errors[0];
  if (error !== undefined) {
    const where = error.linePos?.[0];
    const first = error.message.split("\n")[0] ?? error.message;
    const text = first.replace(/ at line \d+, column \d+:?$/, "");
    throw new UsageError(
      `Invalid ${describe} "${file}"${
        where ? `, line ${where.line}` : ""
      }: ${text}`,
      { code: "INVALID_YAML" },
    );
  }
  return {
    value: doc.toJS(),
    lineOf(path: readonly string[]): number | undefined {
      let node: unknown = doc.contents;
      let line: number | undefined;
      for (const key of path) {
        if (!YAML.isMap(node)) return undefined;
        const pair = node.items.find((item) =>
          YAML.isScalar(item.key) && String(item.key.value) === key
        );
        if (pair === undefined) return undefined;
        const range = YAML.isNode(pair.key) ? pair.key.range : undefined;
        line = range ? lineCounter.linePos(range[0]).line : undefined;
        node = pair.value;
      }
      return line;
    },
  };
}
