import assert from "node:assert/strict";
import { sha256Hex } from "../../../lib/control/_sha256.ts";

async function webCrypto(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    bytes as Uint8Array<ArrayBuffer>,
  );
  return Array.from(
    new Uint8Array(digest),
    (byte) => byte.toString(16).padStart(2, "0"),
  ).join("");
}

Deno.test("sha256Hex() gives the standard digests of the empty text and of abc", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  assert.equal(
    sha256Hex(encode("")),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
  assert.equal(
    sha256Hex(encode("abc")),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});

Deno.test("sha256Hex() agrees with Web Crypto at every length around a block's edges, and for large and random inputs", async () => {
  const lengths = [1, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 1000];
  for (let n = 0; n < 300; n += 7) lengths.push(n);
  lengths.push(200_000, 1 << 20);
  for (const length of lengths) {
    const bytes = new Uint8Array(length);
    crypto.getRandomValues(bytes.subarray(0, Math.min(length, 65536)));
    assert.equal(sha256Hex(bytes), await webCrypto(bytes), `${length} bytes`);
  }
});
