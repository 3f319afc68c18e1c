import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { BodyDigest } from './idempotency-store.js';

/**
 * For bodies Fastify reads (a JSON or raw parser): the parser reads through this stream, which
 * hashes the bytes on their way. `digest` settles once the body has ended.
 */
export class HashingStream extends Transform {
  private readonly hash = crypto.createHash('sha256');
  private bytes = 0;
  private settle!: (digest: BodyDigest) => void;
  readonly digest = new Promise<BodyDigest>((resolve) => (this.settle = resolve));

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    this.settle({ sha256: this.hash.digest('hex'), bytes: this.bytes });
    done();
  }
}

/** How long an answer waits for the last bytes of a body that has fully arrived (epilogue, buffered rest). */
const settleMs = 10_000;

/**
 * For bodies the handler streams from `request.raw` itself (multipart uploads): hashes the
 * bytes as they pass to the handler's reader, without buffering them and without starting the
 * flow, which stays the reader's (back-pressure included). Must be attached before the reader.
 */
export class RawBodyObserver {
  private readonly hash = crypto.createHash('sha256');
  private bytes = 0;
  private result: BodyDigest | undefined;
  private failure: Error | undefined;
  private readonly waiters: Array<() => void> = [];

  constructor(private readonly raw: IncomingMessage) {
    raw.on('data', (chunk: Buffer) => {
      this.hash.update(chunk);
      this.bytes += chunk.length;
    });
    // Adding a 'data' listener switches the stream to flowing; pausing it again leaves the flow
    // to whoever reads next (pipe resumes it), so no byte passes before the handler listens.
    raw.pause();
    raw.once('end', () => {
      this.result = { sha256: this.hash.digest('hex'), bytes: this.bytes };
      this.wake();
    });
    raw.once('close', () => {
      if (!this.result) this.failure = new Error('the request body was not received completely');
      this.wake();
    });
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /**
   * The digest of the whole body. Once the handler is done with the body, what is left of it
   * (the epilogue after a multipart body's last boundary) is read here; a body that has not
   * fully arrived, or does not end within `settleMs`, fails.
   */
  async whole(options: { onlyIfArrived?: boolean } = {}): Promise<BodyDigest> {
    if (this.result) return this.result;
    if (this.failure) throw this.failure;
    if (options.onlyIfArrived && !this.raw.complete) throw new Error('the request body has not fully arrived');
    this.raw.resume();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the request body did not end')), settleMs);
      timer.unref();
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    if (this.result) return this.result;
    throw this.failure ?? new Error('the request body was not received completely');
  }
}

/**
 * The digest of a streamed body nobody else reads: a retry whose first answer is known, to
 * compare with the first request's body before it is sent again.
 */
export function digestOfRest(raw: IncomingMessage): Promise<BodyDigest> {
  return new Promise((resolve, reject) => {
    const hash = crypto.createHash('sha256');
    let bytes = 0;
    raw.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      bytes += chunk.length;
    });
    raw.once('end', () => resolve({ sha256: hash.digest('hex'), bytes }));
    raw.once('close', () => reject(new Error('the request body was not received completely')));
    raw.resume();
  });
}
