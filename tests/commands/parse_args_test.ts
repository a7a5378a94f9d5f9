import assert from "node:assert/strict";
import { parseArgs } from "node:util";
import {
  type OptionSpec,
  parseStrictArgs,
} from "../../commands/_parse_args.ts";
import { errorText } from "../../lib/shared/errors.ts";

const OPTION_SETS: Record<string, OptionSpec>[] = [
  {
    help: { type: "boolean", short: "h" },
    "state-root": { type: "string" },
    json: { type: "boolean" },
    follow: { type: "boolean" },
  },
  {
    help: { type: "boolean", short: "h" },
    prompt: { type: "string", short: "p" },
    author: { type: "string" },
    tag: { type: "string", multiple: true },
    verbose: { type: "boolean", short: "v", multiple: true },
  },
];

const WORDS = [
  "--help",
  "-h",
  "--json",
  "--json=1",
  "--follow",
  "--state-root",
  "--state-root=x",
  "--state-root=",
  "--prompt",
  "-p",
  "-p01",
  "-hv",
  "-vh",
  "-hp",
  "-hpx",
  "-vp3",
  "--tag",
  "--tag=a",
  "-v",
  "--verbose",
  "--author",
  "--nope",
  "-x",
  "-xh",
  "--",
  "-",
  "--=",
  "--=a=b",
  "x",
  "01",
  "-1",
  "-ab",
  "a=b",
  "--no-json",
  "--toString",
  "--constructor",
  "--__proto__",
  "-XYZ",
  "--state-root=-x",
  "text with spaces",
  "",
];

function reference(
  args: string[],
  options: Record<string, OptionSpec>,
): unknown {
  try {
    const { values, positionals } = parseArgs({
      args,
      options,
      strict: true,
      allowPositionals: true,
    });
    return { values: { ...values }, positionals };
  } catch (error) {
    return { error: errorText(error) };
  }
}

function ours(args: string[], options: Record<string, OptionSpec>): unknown {
  try {
    const { values, positionals } = parseStrictArgs(args, options);
    return { values: { ...values }, positionals };
  } catch (error) {
    return { error: errorText(error) };
  }
}

Deno.test("parseStrictArgs() gives parseArgs's values, positionals and errors", () => {
  let state = 42;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  let checked = 0;
  for (const options of OPTION_SETS) {
    for (const word of WORDS) {
      assert.deepEqual(ours([word], options), reference([word], options), word);
    }
    for (let i = 0; i < 4000; i++) {
      const args = Array.from(
        { length: next(5) + 1 },
        () => WORDS[next(WORDS.length)]!,
      );
      assert.deepEqual(
        ours(args, options),
        reference(args, options),
        JSON.stringify(args),
      );
      checked++;
    }
  }
  assert.equal(checked, 8000);
});

Deno.test("parseStrictArgs() returns values without a prototype", () => {
  const { values } = parseStrictArgs(["--json"], { json: { type: "boolean" } });
  assert.equal(Object.getPrototypeOf(values), null);
  assert.equal(values.json, true);
});
