import http from 'node:http';
import net from 'node:net';
import type { TestServer } from '../test-server.js';

/**
 * What the server's blob store holds, whichever it is (files, or S3 on the S3 leg): stored
 * blobs, and the writes in progress (temp files, multipart uploads) that must never outlive a request.
 */
export async function blobFiles(s: TestServer): Promise<{ blobs: string[]; temp: string[] }> {
  const { blobs, pending } = await s.server.media.service.blobs.inventory();
  return { blobs, temp: pending };
}

export interface SendResult {
  status: number;
  // Error bodies are read field by field in assertions.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  /** Bytes of the request body written when the response arrived. */
  sentWhenAnswered: number;
  retryAfter?: string;
}

/**
 * POSTs a multipart body with node:http in 64 KiB writes, noting how much was sent when the
 * answer came (fetch cannot tell), and stopping as soon as it does.
 */
export function send(s: TestServer, m: { body: Buffer; contentType: string }, options: { token: string; abortAt?: number }): Promise<SendResult> {
  const url = new URL(`${s.baseUrl}/media`);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const req = http.request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': m.contentType, 'content-length': m.body.length },
    });
    req.on('response', (res) => {
      answered = true;
      const sentWhenAnswered = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const retryAfter = res.headers['retry-after'];
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, sentWhenAnswered, retryAfter });
        req.destroy();
      });
    });
    req.on('error', (error) => {
      if (!answered && options.abortAt === undefined) reject(error);
    });
    const pump = async () => {
      const step = 64 * 1024;
      while (sent < m.body.length && !answered && !req.destroyed) {
        if (options.abortAt !== undefined && sent >= options.abortAt) {
          req.destroy();
          resolve({ status: 0, body: undefined, sentWhenAnswered: sent });
          return;
        }
        const piece = m.body.subarray(sent, sent + step);
        sent += piece.length;
        if (!req.write(piece)) await new Promise((r) => req.once('drain', r));
        // Let the server answer between writes, as a network would.
        await new Promise((r) => setImmediate(r));
      }
      if (!answered && !req.destroyed) req.end();
    };
    pump().catch(reject);
  });
}

/** Polls until `check` passes (server-side clean-up after a disconnect is asynchronous). */
export async function eventually(check: () => Promise<void> | void, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() - start > timeoutMs) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** A raw TCP connection to a listener, for requests no HTTP client would send (stalls, cut bodies). */
export interface RawConnection {
  socket: net.Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Resolves with Date.now() when the connection closes. */
  closed: Promise<number>;
}

export async function rawConnection(baseUrl: string): Promise<RawConnection> {
  const { hostname, port } = new URL(baseUrl);
  const socket = net.connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
  socket.on('error', () => {}); // a reset is one way of being closed
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  return { socket, received: () => text, closed };
}

/** The request line and headers of a multipart POST /v1/media declaring `contentLength`. */
export const uploadHead = (token: string, boundary: string, contentLength: number, extra = '') =>
  `POST /v1/media HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n${extra}` +
  `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${contentLength}\r\n\r\n`;

/** The head of a multipart `file` part holding a PNG. */
export const pngPartHead = (boundary: string) =>
  `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`;
