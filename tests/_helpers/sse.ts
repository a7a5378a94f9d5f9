/**
 * Reading a Server-Sent Events response message by message, for tests of
 * the dashboard's streams.
 *
 * @module
 */

/** One SSE message. */
export interface SseMessage {
  event: string | null;
  id: string | null;
  data: string;
}

/** Reads an SSE response message by message; closes it when left. */
export async function* sse(response: Response): AsyncGenerator<SseMessage> {
  const reader = response.body!.pipeThrough(new TextDecoderStream())
    .getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      for (
        let at = buffer.indexOf("\n\n");
        at >= 0;
        at = buffer.indexOf("\n\n")
      ) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const message: SseMessage = { event: null, id: null, data: "" };
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const name = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (name === "event") message.event = value;
          if (name === "id") message.id = value;
          if (name === "data") data.push(value);
        }
        if (data.length === 0) continue;
        message.data = data.join("\n");
        yield message;
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
