import crypto from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { AppError } from '../errors/app-error.js';
import { sniff, sniffBytes, type SupportedType } from './sniff.js';

export interface InspectorOptions {
  /** The client's claim; undefined when the bytes alone decide (base64 form B). */
  declared: SupportedType | undefined;
  /** The size limit once the type is known (DECISIONS.md §7). */
  limitFor(type: SupportedType | undefined): number;
  /** Error code for an oversize file: multipart says file_too_large, base64 too_large. */
  oversizeCode: 'file_too_large' | 'too_large';
}

/**
 * The bytes on their way to the blob store: counted (failing the stream as soon as the limit
 * is passed), hashed, and sniffed from their first bytes, all in one pass with no buffering
 * beyond the sniff window.
 */
export class Inspector extends Transform {
  private readonly hash = crypto.createHash('sha256');
  private head: Buffer[] = [];
  private headLength = 0;
  size = 0;
  detected: SupportedType | undefined;
  private decided = false;
  private limit: number;

  constructor(private readonly options: InspectorOptions) {
    super();
    this.limit = options.limitFor(options.declared);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (!this.decided) {
      this.head.push(chunk);
      this.headLength += chunk.length;
      if (this.headLength >= sniffBytes) {
        const error = this.decide();
        if (error) return done(error);
      }
    }
    if (this.size > this.limit) return done(this.oversize());
    this.hash.update(chunk);
    done(null, chunk);
  }

  override _flush(done: TransformCallback): void {
    const error = this.decided ? undefined : this.decide();
    done(error);
  }

  /** Checks the sniffed type against the claim, once; returns the error that stops the upload. */
  private decide(): AppError | undefined {
    this.decided = true;
    const head = Buffer.concat(this.head);
    this.head = [];
    this.detected = sniff(head.subarray(0, sniffBytes));
    const { declared } = this.options;
    if (!this.detected || (declared && declared !== this.detected)) {
      const detected = this.detected ?? 'application/octet-stream';
      const message = declared
        ? `the file's bytes are ${detected}, not the declared ${declared}`
        : `the file's bytes are not a supported type (image/png, image/jpeg, image/gif, image/webp, video/mp4, video/webm, application/pdf)`;
      return new AppError('unsupported_type', message, { declared: declared ?? null, detected });
    }
    this.limit = this.options.limitFor(this.detected);
    return this.size > this.limit ? this.oversize() : undefined;
  }

  private oversize(): AppError {
    return new AppError(this.options.oversizeCode, `file exceeds maximum allowed size of ${this.limit} bytes`, { limit: this.limit });
  }

  digest(): string {
    return this.hash.digest('hex');
  }
}
