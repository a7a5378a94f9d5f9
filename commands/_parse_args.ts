/**
 * Strict argument parsing with `node:util` `parseArgs`'s results and error
 * messages (strict, positionals allowed), without loading Node's
 * compatibility layer: the first `node:` module a process evaluates costs
 * more than a whole quick command. A test checks it against `parseArgs`.
 *
 * @module
 */

/** One option, as `parseArgs` describes it. */
export interface OptionSpec {
  /** `string` takes a value; `boolean` does not. */
  type: "string" | "boolean";
  /** A one-letter alias. */
  short?: string;
  /** Whether the option may repeat (its values are collected). */
  multiple?: boolean;
}

/** What {@linkcode parseStrictArgs} returns. */
export interface StrictArgs {
  /** Option values by name (a prototype-less object). */
  values: Record<string, string | boolean | (string | boolean)[]>;
  /** Positional arguments. */
  positionals: string[];
}

interface OptionToken {
  name: string;
  rawName: string;
  value: string | undefined;
  inlineValue: boolean | undefined;
}

function specOf(
  options: Record<string, OptionSpec>,
  name: string,
): OptionSpec | undefined {
  return Object.hasOwn(options, name) ? options[name] : undefined;
}

function longFor(short: string, options: Record<string, OptionSpec>): string {
  for (const name of Object.keys(options)) {
    if (options[name]!.short === short) return name;
  }
  return short;
}

function startsShort(arg: string): boolean {
  return arg.length > 2 && arg[0] === "-" && arg[1] !== "-";
}

/**
 * Parses arguments as `parseArgs({args, options, strict: true,
 * allowPositionals: true})` does.
 *
 * @throws {TypeError} with `parseArgs`'s message, for an unknown option, a
 * missing or ambiguous value, or a value given to a boolean option.
 */
export function parseStrictArgs(
  args: readonly string[],
  options: Record<string, OptionSpec>,
): StrictArgs {
  const remaining = [...args];
  const values: StrictArgs["values"] = Object.create(null);
  const positionals: string[] = [];
  const option = (token: OptionToken): void => {
    const spec = specOf(options, token.name);
    if (spec === undefined) {
      throw new TypeError(
        `Unknown option '${token.rawName}'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- ${
          JSON.stringify(token.rawName)
        }`,
      );
    }
    const both = `${spec.short ? `-${spec.short}, ` : ""}--${token.name}`;
    if (spec.type === "string" && typeof token.value !== "string") {
      throw new TypeError(`Option '${both} <value>' argument missing`);
    }
    if (spec.type === "boolean" && token.value !== undefined) {
      throw new TypeError(`Option '${both}' does not take an argument`);
    }
    const value = token.value;
    if (
      !token.inlineValue && value !== undefined && value.length > 1 &&
      value[0] === "-"
    ) {
      const example = token.rawName.startsWith("--")
        ? `'${token.rawName}=-XYZ'`
        : `'--${token.name}=-XYZ' or '${token.rawName}-XYZ'`;
      throw new TypeError(
        `Option '${token.rawName}' argument is ambiguous.
Did you forget to specify the option argument for '${token.rawName}'?
To specify an option argument starting with a dash use ${example}.`,
      );
    }
    if (token.name === "__proto__") return;
    const stored = value ?? true;
    if (spec.multiple) {
      const list = values[token.name];
      if (Array.isArray(list)) list.push(stored);
      else values[token.name] = [stored];
    } else {
      values[token.name] = stored;
    }
  };
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    const next = remaining[0];
    if (arg === "--") {
      positionals.push(...remaining.splice(0));
      break;
    }
    if (arg.length === 2 && arg[0] === "-" && arg[1] !== "-") {
      const name = longFor(arg[1]!, options);
      const takes = specOf(options, name)?.type === "string" &&
        next !== undefined;
      option({
        name,
        rawName: arg,
        value: takes ? remaining.shift() : undefined,
        inlineValue: takes ? false : undefined,
      });
      continue;
    }
    if (startsShort(arg)) {
      const name = longFor(arg[1]!, options);
      if (specOf(options, name)?.type !== "string") {
        // A group of short options: `-ab` is `-a -b`, and a string option
        // in it takes the rest as its value.
        const expanded: string[] = [];
        for (let i = 1; i < arg.length; i++) {
          const short = arg[i]!;
          const long = longFor(short, options);
          if (
            specOf(options, long)?.type !== "string" || i === arg.length - 1
          ) {
            expanded.push(`-${short}`);
          } else {
            expanded.push(`-${short}${arg.slice(i + 1)}`);
            break;
          }
        }
        remaining.unshift(...expanded);
        continue;
      }
      option({
        name,
        rawName: `-${arg[1]}`,
        value: arg.slice(2),
        inlineValue: true,
      });
      continue;
    }
    if (arg.length > 2 && arg.startsWith("--")) {
      if (!arg.includes("=", 3)) {
        const name = arg.slice(2);
        const takes = specOf(options, name)?.type === "string" &&
          next !== undefined;
        option({
          name,
          rawName: arg,
          value: takes ? remaining.shift() : undefined,
          inlineValue: takes ? false : undefined,
        });
      } else {
        const at = arg.indexOf("=");
        const name = arg.slice(2, at);
        option({
          name,
          rawName: `--${name}`,
          value: arg.slice(at + 1),
          inlineValue: true,
        });
      }
      continue;
    }
    positionals.push(arg);
  }
  return { values, positionals };
}
