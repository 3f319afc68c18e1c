import type { IncomingMessage } from 'node:http';

/** How much of the body we look at; the `file` part's headers come well before this. */
const window = 64 * 1024;

/**
 * Whether the multipart part named `file` declared a Content-Type. Busboy reports a missing
 * one as `text/plain`, which would turn SPEC's 400 into a 415; this reads the part's raw
 * headers from the first bytes of the body instead (no copy beyond `window`).
 */
export function watchFilePartHeaders(raw: IncomingMessage): { hadContentType(): boolean | undefined } {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(raw.headers['content-type'] ?? '');
  const delimiter = boundary ? `--${boundary[1] ?? boundary[2]}` : undefined;
  let head = '';
  let answer: boolean | undefined;
  const scan = () => {
    for (const section of head.split(delimiter!).slice(1)) {
      const end = section.indexOf('\r\n\r\n');
      if (end < 0) return;
      const headers = section.slice(0, end);
      if (/content-disposition:[^\r\n]*\bname="?file"?(;|\s|\r|$)/i.test(headers) && /filename/i.test(headers)) {
        answer = /(^|\r\n)content-type\s*:/i.test(headers);
        return;
      }
    }
  };
  const onData = (chunk: Buffer) => {
    head += chunk.toString('latin1', 0, Math.min(chunk.length, window - head.length));
    scan();
    if (answer !== undefined || head.length >= window) raw.off('data', onData);
  };
  if (delimiter) raw.on('data', onData);
  return { hadContentType: () => answer };
}
