/**
 * A bridge's audit-log loop: follows the state root's `log.jsonl` and
 * publishes each of the run's lines to `pr.log.<key>` as it is
 * (`Nats-Msg-Id: <run_id>:log:<line number>`, the line's number in the
 * file), resuming after every outage from the fleet's last line.
 *
 * @module
 */

import { controlPaths } from "../control/paths.ts";
import { DirWaker, LineTail } from "../control/line_tail.ts";
import { openExisting } from "../shared/files.ts";
import { basename } from "../shared/posix_path.ts";
import { OrderedPublisher, PublishStopped } from "./_publisher.ts";
import { type BridgeRun, isAbort } from "./_bridge_run.ts";
import { LOG_STREAM, logSubject } from "./fleet_names.ts";

const NEWLINE = 0x0a;
const encoder = new TextEncoder();

/**
 * Where line `number` + 1 of a file starts: after its `number`-th newline
 * (or after its last one, when it has fewer lines).
 */
async function offsetAfterLine(
  file: Deno.FsFile,
  number: number,
): Promise<{ offset: number; line: number }> {
  const buffer = new Uint8Array(1024 * 1024);
  let read = 0;
  let line = 0;
  let offset = 0;
  await file.seek(0, Deno.SeekMode.Start);
  while (line < number) {
    const n = await file.read(buffer);
    if (n === null || n === 0) break;
    let at = buffer.subarray(0, n).indexOf(NEWLINE);
    while (at >= 0) {
      line++;
      offset = read + at + 1;
      if (line === number) break;
      const next = buffer.subarray(at + 1, n).indexOf(NEWLINE);
      at = next < 0 ? -1 : at + 1 + next;
    }
    read += n;
  }
  return { offset, line };
}

/** The line number in a log message's id (`<run_id>:log:<n>`). */
function lineOfId(id: string | undefined): number {
  const at = id?.lastIndexOf(":log:") ?? -1;
  const n = at < 0 ? NaN : Number(id!.slice(at + 5));
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/**
 * Publishes the run's audit-log lines until the bridge finishes (then one
 * last pass takes what is left). An outage is waited out, then publishing
 * resumes after the fleet's last line.
 */
export async function bridgeLog(run: BridgeRun): Promise<void> {
  const paths = controlPaths(run.ref.state_root);
  const subject = logSubject(run.names.key);
  const prefix = `${run.ref.run_id}:log:`;
  const waker = new DirWaker(paths.dir, [basename(paths.log)]);
  let publisher: OrderedPublisher | null = null;
  try {
    for (;;) {
      let link;
      try {
        link = await run.session.ready(run.stop);
      } catch (error) {
        if (isAbort(error)) return;
        throw error;
      }
      publisher ??= new OrderedPublisher(link, subject);
      let tail: LineTail | null = null;
      try {
        const last = await link.lastMessage(LOG_STREAM, subject);
        let line = lineOfId(last?.msgId);
        publisher.restart(last?.seq ?? 0);
        let lastPass = false;
        for (;;) {
          if (tail === null) {
            const file = await openExisting(paths.log, {
              within: paths.root,
            });
            if (file !== null) {
              const start = await offsetAfterLine(file, line);
              line = start.line;
              tail = new LineTail(file, false, start.offset);
            }
          }
          const text = tail === null ? null : await tail.readText();
          if (text !== null) {
            for (const entry of text.split("\n")) {
              if (entry === "") continue;
              line++;
              const mine = ofRun(entry, run.ref.run_id);
              if (mine === null) continue;
              const bytes = encoder.encode(entry);
              if (bytes.length + 512 > link.maxPayload) continue;
              while (!publisher.trySend(bytes, prefix + line)) {
                await publisher.room();
              }
              run.progress.logLines++;
              if (mine.amended !== null) run.contractChanged(mine.amended);
            }
            run.progress.lastProgress = Date.now();
            continue;
          }
          if (lastPass || run.stop.aborted) break;
          if (run.finishing.aborted) {
            lastPass = true;
            continue;
          }
          await waker.wait(run.finishing, 1_000);
        }
        await publisher.drain();
        return;
      } catch (error) {
        if (error instanceof PublishStopped) {
          await run.session.backoff(error, run.stop);
          continue;
        }
        if (isAbort(error) || run.stop.aborted) return;
        throw error;
      } finally {
        tail?.close();
      }
    }
  } finally {
    publisher?.close();
    await waker.close();
  }
}

/**
 * Whether a log line is the run's, and the prompt whose contract it
 * changed (an applied amend or relax), or `null` when it is another run's.
 */
function ofRun(
  line: string,
  runId: string,
): { amended: string | null } | null {
  try {
    const entry = JSON.parse(line);
    if (entry?.run_id !== runId) return null;
    const amended = (entry.command === "amend" || entry.command === "relax") &&
        entry.outcome === "applied" && typeof entry.prompt_id === "string"
      ? entry.prompt_id as string
      : null;
    return { amended };
  } catch {
    return null;
  }
}
