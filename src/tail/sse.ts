import type { ServerResponse } from 'node:http';

/**
 * Server-Sent Events framing and one stream's writer (SPEC.md §6). Every event is its own SSE
 * message: an `id:` line (the event's seq, what `Last-Event-ID` resumes after) and one `data:`
 * line of JSON. Comments (`:heartbeat`, the closing reason) start with a colon.
 */

export const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  // Reverse proxies (nginx) would otherwise buffer the stream and add latency.
  'x-accel-buffering': 'no',
} as const;

/** JSON.stringify never emits a raw line break, so one event is always one `data:` line. */
export const eventFrame = (id: string, json: string): string => `id: ${id}\ndata: ${json}\n\n`;

export const heartbeatFrame = ':heartbeat\n\n';

/** A comment line; line breaks in the text would end the comment, so they become spaces. */
export const commentFrame = (text: string): string => `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;

export interface SseStreamOptions {
  /**
   * Bytes the server may hold for a client that does not read (Node's buffer plus the
   * socket's). Past it the client is dropped with a final comment instead of buffering more.
   */
  maxBufferedBytes: number;
  /** How long a dropped or closed stream may take to flush its last bytes before the socket is destroyed. */
  flushGraceMs: number;
  /** Called once, whatever ends the stream (client gone, drop, close). */
  onEnd: (reason: EndReason) => void;
}

export type EndReason = 'client_gone' | 'slow_client' | 'idle' | 'shutdown' | 'error';

/** Writes one SSE response; never buffers more than `maxBufferedBytes` for a client. */
export class SseStream {
  private ended = false;
  private destroyTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: SseStreamOptions,
  ) {
    res.on('close', () => {
      if (this.destroyTimer) clearTimeout(this.destroyTimer);
      this.finish('client_gone');
    });
    res.on('error', () => this.finish('client_gone'));
  }

  get isOpen(): boolean {
    return !this.ended;
  }

  /** Writes a chunk; a client already holding too many unread bytes is dropped instead. */
  write(chunk: string): boolean {
    if (this.ended) return false;
    if (this.res.writableLength > this.options.maxBufferedBytes) {
      this.end(
        'slow_client',
        `closed: the client is not reading (more than ${this.options.maxBufferedBytes} bytes unread); reconnect with Last-Event-ID to resume`,
      );
      return false;
    }
    this.res.write(chunk);
    return true;
  }

  /** Ends the stream with a final comment saying why; the socket is destroyed if it cannot flush in time. */
  end(reason: EndReason, comment: string): void {
    if (this.ended) return;
    this.finish(reason);
    if (this.res.destroyed) return;
    this.res.end(commentFrame(comment));
    if (!this.res.writableFinished) {
      this.destroyTimer = setTimeout(() => this.res.destroy(), this.options.flushGraceMs);
      this.destroyTimer.unref();
      this.res.once('finish', () => clearTimeout(this.destroyTimer));
    }
  }

  /** Destroys the connection now (shutdown after the grace period). */
  destroy(): void {
    if (this.destroyTimer) clearTimeout(this.destroyTimer);
    this.finish('shutdown');
    if (!this.res.destroyed && !this.res.writableFinished) this.res.destroy();
  }

  /** Resolves once the response has flushed or the connection closed. */
  settled(): Promise<void> {
    if (this.res.writableFinished || this.res.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      this.res.once('finish', resolve);
      this.res.once('close', resolve);
    });
  }

  private finish(reason: EndReason): void {
    if (this.ended) return;
    this.ended = true;
    this.options.onEnd(reason);
  }
}
