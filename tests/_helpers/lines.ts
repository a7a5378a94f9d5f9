/**
 * Reading a child's output line by line: the scripts' harness owns it.
 *
 * @module
 */

export { LineReader, readAll } from "../../scripts/_harness/lines.ts";
