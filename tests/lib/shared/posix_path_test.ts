import assert from "node:assert/strict";
import { posix } from "node:path";
import {
  basename,
  dirname,
  isAbsolute,
  join,
  normalize,
  relative,
  resolve,
} from "../../../lib/shared/posix_path.ts";

const PARTS = ["", "/", "//", ".", "..", "a", "bc", ".x", "...", "a.b", "é"];

/** Paths made of up to five parts joined by nothing, "/" or "//". */
function* paths(count: number, seed = 1): Generator<string> {
  let state = seed;
  const next = (n: number): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state % n;
  };
  yield* PARTS;
  for (let i = 0; i < count; i++) {
    let path = "";
    for (let k = next(6); k > 0; k--) {
      path += PARTS[next(PARTS.length)]! + ["", "/", "//"][next(3)]!;
    }
    yield path;
  }
}

Deno.test("posix_path gives node:path's answers for normalize, join, dirname, basename and isAbsolute", () => {
  const all = [...paths(3000)];
  for (const path of all) {
    assert.equal(normalize(path), posix.normalize(path), `normalize ${path}`);
    assert.equal(dirname(path), posix.dirname(path), `dirname ${path}`);
    assert.equal(basename(path), posix.basename(path), `basename ${path}`);
    assert.equal(isAbsolute(path), posix.isAbsolute(path), path);
  }
  for (let i = 0; i + 2 < all.length; i++) {
    const [a, b, c] = [all[i]!, all[i + 1]!, all[i + 2]!];
    assert.equal(join(a, b, c), posix.join(a, b, c), `join ${a} ${b} ${c}`);
  }
  assert.equal(join(), posix.join());
});

Deno.test("posix_path gives node:path's answers for resolve and relative", () => {
  const all = [...paths(2000, 7)];
  for (let i = 0; i + 1 < all.length; i++) {
    const [a, b] = [all[i]!, all[i + 1]!];
    assert.equal(resolve(a, b), posix.resolve(a, b), `resolve ${a} ${b}`);
    assert.equal(resolve("/r", a, b), posix.resolve("/r", a, b));
    assert.equal(relative(a, b), posix.relative(a, b), `relative ${a} ${b}`);
    assert.equal(relative("/" + a, "/" + b), posix.relative("/" + a, "/" + b));
  }
  assert.equal(resolve(), posix.resolve());
});
