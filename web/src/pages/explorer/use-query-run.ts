// The explorer's query (POST /v1/query): the reader's text with the range's bounds in front,
// run whenever `runKey` (query, range, a re-run's count, target) changes and `enabled` (not
// live); "load more" by the answer's cursor. An answer for an older run is dropped.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ApiError } from '../../api/errors';
import type { GroupsAnswer, StatsAnswer } from './aggregate';
import type { ApiEvent } from './events-table';
import { boundsText, withBounds, type SentQuery, type TimeRange } from './soql-text';

export type Answer =
  | { kind: 'events'; events: ApiEvent[]; nextCursor: string; hasMore: boolean }
  | ({ kind: 'groups' } & GroupsAnswer)
  | ({ kind: 'stats' } & StatsAnswer);

export interface Run {
  q: string;
  /** the range's URL parameters (`range=1h`) */
  range: string;
  sent: SentQuery;
  status: 'loading' | 'done' | 'error';
  answer?: Answer;
  error?: unknown;
  loadingMore?: boolean;
  moreError?: unknown;
}

/** A query's error with a position in the reader's text (parse errors). */
export interface QueryError {
  q: string;
  error: ApiError;
  position: number | null;
}

function toAnswer(body: unknown): Answer {
  const b = body as Record<string, unknown>;
  if (Array.isArray(b.events)) return { kind: 'events', events: b.events as ApiEvent[], nextCursor: String(b.next_cursor ?? ''), hasMore: b.has_more === true };
  if (Array.isArray(b.groups)) return { kind: 'groups', field: String(b.field), groups: b.groups as GroupsAnswer['groups'] };
  return { kind: 'stats', stats: (b.stats ?? []) as StatsAnswer['stats'] };
}

export const postQuery = (q: string, cursor?: string) => data(api.POST('/v1/query', { body: cursor ? { q, cursor } : { q } }));

export interface QueryRun {
  run: Run | undefined;
  /** The run's parse error at its position in the reader's text, if it failed so. */
  error: QueryError | undefined;
  /** The `runKey` whose answer (or failure) is shown; '' while it runs. */
  settled: string;
  loadMore(): Promise<void>;
}

export function useQueryRun(q: string, range: TimeRange, rangeKey: string, runKey: string, enabled: boolean): QueryRun {
  const [run, setRun] = useState<Run>();
  const [settled, setSettled] = useState('');
  const seq = useRef(0);
  useEffect(() => {
    if (!enabled) return;
    const id = ++seq.current;
    const sent = withBounds(q, boundsText(range));
    setSettled('');
    setRun((prev) => ({ q, range: rangeKey, sent, status: 'loading', answer: prev?.q === q ? prev.answer : undefined }));
    postQuery(sent.q)
      .then(
        (body) => id === seq.current && setRun({ q, range: rangeKey, sent, status: 'done', answer: toAnswer(body) }),
        (error: unknown) => id === seq.current && setRun({ q, range: rangeKey, sent, status: 'error', error }),
      )
      .finally(() => id === seq.current && setSettled(runKey));
  }, [runKey, enabled]);

  const loadMore = async () => {
    const current = run;
    if (!current || current.answer?.kind !== 'events' || !current.answer.hasMore) return;
    const id = seq.current;
    setRun({ ...current, loadingMore: true, moreError: undefined });
    try {
      const next = toAnswer(await postQuery(current.sent.q, current.answer.nextCursor));
      if (id !== seq.current || next.kind !== 'events') return;
      setRun({ ...current, loadingMore: false, answer: { ...next, events: [...current.answer.events, ...next.events] } });
    } catch (error) {
      if (id === seq.current) setRun({ ...current, loadingMore: false, moreError: error });
    }
  };

  const failed = run?.status === 'error' && run.error instanceof ApiError ? run.error : undefined;
  const position = failed?.details.position;
  const error = failed && run && typeof position === 'number' ? { q: run.q, error: failed, position: run.sent.toUser(position) } : undefined;
  return { run, error, settled, loadMore };
}
