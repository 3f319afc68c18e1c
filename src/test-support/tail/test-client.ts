import { createParser } from 'eventsource-parser';

/**
 * A live-tail client for tests and the benchmark: fetch with a streamed body, parsed by
 * `eventsource-parser` (a real SSE client library, not our own framing).
 */
export interface TailEvent {
  /** The SSE id as a number: the seq, on the embedded engine (NaN for ClickHouse's per-log positions). */
  id: number;
  /** The SSE id as sent: what Last-Event-ID resumes from, on every engine. */
  lastEventId: string;
  // Tests and the bench read arbitrary event fields.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
  /** performance.now() when the event was parsed. */
  at: number;
}

export type OpenResult =
  | { status: 200; client: TailClient; headers: Headers }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  | { status: number; body: any; headers: Headers };

export class TailClient {
  readonly events: TailEvent[] = [];
  readonly comments: string[] = [];
  /** The stream has ended (server closed it, or close()). */
  ended = false;
  readonly done: Promise<void>;
  private waiters = new Set<() => void>();

  private constructor(
    body: ReadableStream<Uint8Array>,
    private readonly controller: AbortController,
  ) {
    const parser = createParser({
      onEvent: (message) => {
        this.events.push({ id: Number(message.id), lastEventId: message.id ?? '', data: JSON.parse(message.data), at: performance.now() });
        this.notify();
      },
      onComment: (comment) => {
        this.comments.push(comment.trim());
        this.notify();
      },
    });
    this.done = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of body) parser.feed(decoder.decode(chunk, { stream: true }));
      } catch {
        // aborted or cut: `ended` says so
      }
      this.ended = true;
      this.notify();
    })();
  }

  static async open(baseUrl: string, token: string, q: string, options: { lastEventId?: number | string } = {}): Promise<OpenResult> {
    const controller = new AbortController();
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['last-event-id'] = String(options.lastEventId);
    const response = await fetch(`${baseUrl}/query/tail`, { method: 'POST', headers, body: JSON.stringify({ q }), signal: controller.signal });
    if (response.status !== 200 || !response.body) {
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
    }
    return { status: 200, client: new TailClient(response.body, controller), headers: response.headers };
  }

  /** Resolves once `condition` holds (checked on every event, comment and the end). */
  async until(condition: (c: TailClient) => boolean, timeoutMs = 5_000, what = 'condition'): Promise<void> {
    if (condition(this)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}; have ${this.events.length} events, comments ${JSON.stringify(this.comments.slice(-5))}, ended ${this.ended}`));
      }, timeoutMs);
      const check = () => {
        if (!condition(this)) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }

  /** The client goes away (the connection is closed). */
  async close(): Promise<void> {
    this.controller.abort();
    await this.done;
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
