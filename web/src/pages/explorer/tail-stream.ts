// The live tail's connection: POST /v1/query/tail read as a stream (fetch, so the Authorization
// header can be sent, which EventSource cannot), parsed by eventsource-parser. It reconnects
// with Last-Event-ID when the stream ends or goes quiet, and stops for good on a refusal the
// reader must act on (402 plan, 429 sessions, 400 query, 403 scope).
import { createParser } from 'eventsource-parser';
import { authorizedFetch } from '../../api/client';
import { ApiError } from '../../api/errors';
import type { ApiEvent } from './events-table';

export type TailStatus =
  | { kind: 'connecting'; attempt: number }
  | { kind: 'connected'; since: number; lastHeartbeat: number | null }
  | { kind: 'reconnecting'; at: number; reason: string }
  | { kind: 'failed'; error: ApiError };

export interface TailOptions {
  q: string;
  onEvents: (events: ApiEvent[]) => void;
  onStatus: (status: TailStatus) => void;
  /** Reconnect when nothing (event or heartbeat) arrived for this long; the server beats every 15 s. */
  staleMs?: number;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

/** Opens the tail; the returned function closes it (AbortController: the server frees the slot at once). */
export function openTail(options: TailOptions): () => void {
  const stop = new AbortController();
  void run(options, stop.signal);
  return () => stop.abort();
}

async function run(options: TailOptions, signal: AbortSignal): Promise<void> {
  const staleMs = options.staleMs ?? 45_000;
  let lastEventId: string | undefined;
  let failures = 0;
  /** connections opened so far: the first is "connecting", later ones "reconnecting" */
  let attempt = 0;
  while (!signal.aborted) {
    options.onStatus({ kind: 'connecting', attempt: attempt++ });
    const current = new AbortController();
    const abortAttempt = () => current.abort();
    signal.addEventListener('abort', abortAttempt, { once: true });
    let reason = 'the connection was lost';
    let watchdog: ReturnType<typeof setInterval> | undefined;
    try {
      const response = await authorizedFetch('/v1/query/tail', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        body: JSON.stringify({ q: options.q }),
        signal: current.signal,
      });
      failures = 0;
      const since = Date.now();
      let lastHeartbeat: number | null = null;
      let lastActivity = since;
      options.onStatus({ kind: 'connected', since, lastHeartbeat });
      const pending: ApiEvent[] = [];
      const parser = createParser({
        onEvent(message) {
          if (message.id) lastEventId = message.id;
          try {
            pending.push(JSON.parse(message.data) as ApiEvent);
          } catch {
            // not an event: ignored
          }
        },
        onComment(comment) {
          if (comment.trim() === 'heartbeat') {
            lastHeartbeat = Date.now();
            options.onStatus({ kind: 'connected', since, lastHeartbeat });
          } else if (comment.trim()) {
            reason = comment.trim();
          }
        },
      });
      watchdog = setInterval(() => {
        if (Date.now() - lastActivity > staleMs) {
          reason = `nothing arrived for ${Math.round(staleMs / 1000)} s`;
          current.abort();
        }
      }, 1000);
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        lastActivity = Date.now();
        parser.feed(value);
        if (pending.length) options.onEvents(pending.splice(0));
      }
      reason = reason === 'the connection was lost' ? 'the server ended the stream' : reason;
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.code !== 'rate_limited') {
        options.onStatus({ kind: 'failed', error });
        return;
      }
      if (error instanceof ApiError) reason = error.message;
      failures++;
    } finally {
      clearInterval(watchdog);
      signal.removeEventListener('abort', abortAttempt);
    }
    if (signal.aborted) return;
    // 1 s after a stream that worked and ended (the server's idle close); after failures 1 s,
    // 2 s, 4 s … at most 15 s.
    const wait = failures === 0 ? 1000 : Math.min(15_000, 1000 * 2 ** (failures - 1));
    options.onStatus({ kind: 'reconnecting', at: Date.now() + wait, reason });
    await sleep(wait, signal);
  }
}
