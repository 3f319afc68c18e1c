// The explorer (issue #18), the dashboard's home page: a SOQL editor, a time range, the volume
// histogram, and the answer of POST /v1/query (events with load-more by cursor, or a group by /
// stats table and chart); Live switches the same query to POST /v1/query/tail. The query and
// range live in the URL (?q=…&range=1h, or range=custom&from=…&to=…), so reload and back keep them.
// The range is added to the query sent as `ts >= … AND (<filter>) <group by | stats>`
// (soql-text.ts withBounds); parse errors are mapped back to the reader's text.
import type { JSX } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ApiError, describeError } from '../../api/errors';
import { Link, navigate, type Route } from '../../router';
import { useSession } from '../../session';
import { GroupsView, StatsView, type GroupsAnswer, type StatsAnswer } from './aggregate';
import { SoqlEditor } from './editor';
import { EventsTable, type ApiEvent } from './events-table';
import { Histogram, type HistogramData } from './histogram';
import { LiveView } from './live-view';
import { type Vocabulary } from './soql-complete';
import { addFilter, binWidth, boundsText, fieldText, filterOf, interval, rangeFromParams, rangeParams, withBounds, type SentQuery, type TimeRange } from './soql-text';
import { TimeRangePicker } from './time-range';
import { SavedSearches } from './saved-searches';
import { timeRangeOf } from './saved-range';
import './explorer.css';
import './saved-searches.css';

type Answer =
  | { kind: 'events'; events: ApiEvent[]; nextCursor: string; hasMore: boolean }
  | ({ kind: 'groups' } & GroupsAnswer)
  | ({ kind: 'stats' } & StatsAnswer);

interface Run {
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
interface QueryError {
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

const postQuery = (q: string, cursor?: string) => data(api.POST('/v1/query', { body: cursor ? { q, cursor } : { q } }));

/** Payload keys (up to 200, as SOQL writes them) and datasets of the events shown: the editor offers them. */
function vocabularyOf(events: readonly ApiEvent[]): Vocabulary {
  const keys = new Set<string>();
  const datasets = new Set<string>();
  const walk = (value: unknown, path: string[], depth: number) => {
    if (keys.size >= 200 || depth > 4) return;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      const text = fieldText(['payload', ...path]);
      if (text) keys.add(text);
      return;
    }
    for (const [key, inner] of Object.entries(value)) walk(inner, [...path, key], depth + 1);
  };
  for (const event of events) {
    datasets.add(event.dataset);
    if (event.payload && typeof event.payload === 'object') for (const [key, inner] of Object.entries(event.payload)) walk(inner, [key], 1);
  }
  return { payloadKeys: [...keys].sort(), datasets: [...datasets].sort() };
}

function rangeKey(range: TimeRange): string {
  return new URLSearchParams(rangeParams(range)).toString();
}

function urlFor(q: string, range: TimeRange): string {
  const params = new URLSearchParams({ ...(q ? { q } : {}), ...rangeParams(range) });
  return `/?${params.toString()}`;
}

/** An error of the query in words: a parse error with where it is, a plan quota explained. */
function QueryErrorNote(props: { error: unknown; position: number | null; q: string }): JSX.Element | null {
  const { error } = props;
  if (!error) return null;
  if (error instanceof ApiError && (error.code === 'soql_parse_error' || error.code === 'soql_reserved_field')) {
    // `near` as the reader wrote it (the server's is taken from the query sent, with the range's bounds).
    const nearText = props.position === null ? '' : props.q.slice(props.position, props.position + 20).trimEnd();
    const near = nearText ? ` near “${nearText}”` : props.position !== null && props.position >= props.q.length ? ' (the end)' : '';
    return (
      <p class="note error" role="alert" id="soql-error" data-testid="query-error">
        {props.position === null ? 'The query cannot be read' : `The query cannot be read at character ${props.position + 1}${near}`}: {error.message}
      </p>
    );
  }
  if (error instanceof ApiError && error.code === 'quota_exceeded') {
    const quotas = Array.isArray(error.details.quotas) ? (error.details.quotas as Array<{ metric: string; used: number; limit: number | null }>) : [];
    const quota = quotas.find((x) => x.metric === error.details.metric);
    return (
      <p class="note error" role="alert" data-testid="query-error">
        {error.message}.{' '}
        {quota && quota.limit !== null
          ? `This organisation's plan allows ${quota.limit.toLocaleString()} ${quota.metric === 'queries_month' ? 'queries a month' : quota.metric}, and ${quota.used.toLocaleString()} are used.`
          : ''}{' '}
        <Link href="/usage">See usage and plan</Link>
      </p>
    );
  }
  return (
    <p class="note error" role="alert" data-testid="query-error">
      {describeError(error)}
    </p>
  );
}

export function ExplorerPage(props: { route: Route }): JSX.Element {
  const session = useSession();
  const target = `${session.target.org_id}/${session.target.project_id}/${session.target.mode}`;
  const q = props.route.query.get('q') ?? '';
  const range = useMemo(() => rangeFromParams(props.route.query), [props.route.query.get('range'), props.route.query.get('from'), props.route.query.get('to')]);
  const rKey = rangeKey(range);

  /** The editor's text as typed (reported by the editor; it may differ from the URL's `q` until run). */
  const [draft, setDraft] = useState(q);
  /** A text pushed into the editor from outside: a new object for each push (editor.tsx). */
  const [external, setExternal] = useState(() => ({ text: q }));
  /** The query this page last navigated to itself (a run, a filter): not pushed back into the editor. */
  const navigatedTo = useRef(q);
  const setText = useCallback((text: string) => {
    setDraft(text);
    setExternal({ text });
  }, []);
  const [nonce, setNonce] = useState(0);
  const [live, setLive] = useState(false);
  const [run, setRun] = useState<Run | undefined>();
  const [histogram, setHistogram] = useState<{ q: string; data?: HistogramData; error?: unknown } | undefined>();
  const [queryError, setQueryError] = useState<QueryError | undefined>();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const seq = useRef(0);
  /** The run whose query and histogram have both answered (tests and the bench wait for it). */
  const [answered, setAnswered] = useState(0);

  // A query the URL got from elsewhere (back and forward) becomes the editor's text; one this
  // page ran is the editor's text already, or an older one if typing went on since.
  // (An effect runs after paint: one left behind by a newer render does nothing.)
  const latestQ = useRef(q);
  latestQ.current = q;
  useEffect(() => {
    if (q !== latestQ.current || q === navigatedTo.current) return;
    navigatedTo.current = q;
    setText(q);
  }, [q]);

  /** Runs (q, range): a new URL entry, or the same one again. */
  const go = useCallback(
    (nextQ: string, nextRange: TimeRange) => {
      const url = urlFor(nextQ, nextRange);
      navigatedTo.current = nextQ;
      if (nextQ === q && rangeKey(nextRange) === rKey) setNonce((n) => n + 1);
      else navigate(url);
    },
    [q, rKey],
  );

  useEffect(() => {
    if (live) return;
    const id = ++seq.current;
    let waiting = 2;
    const done = () => --waiting === 0 && id === seq.current && setAnswered(id);
    const sent = withBounds(q, boundsText(range));
    const now = Date.now();
    setRun((prev) => ({ q, range: rKey, sent, status: 'loading', answer: prev?.q === q ? prev.answer : undefined }));
    setQueryError(undefined);
    setExpanded(new Set());
    postQuery(sent.q)
      .then(
        (body) => id === seq.current && setRun({ q, range: rKey, sent, status: 'done', answer: toAnswer(body) }),
        (error: unknown) => {
          if (id !== seq.current) return;
          setRun({ q, range: rKey, sent, status: 'error', error });
          if (error instanceof ApiError && typeof error.details.position === 'number') setQueryError({ q, error, position: sent.toUser(error.details.position) });
        },
      )
      .finally(done);
    // The histogram: the filter alone, whatever the clause, in bins of the range.
    const span = interval(range, now);
    const width = binWidth(span.to - span.from);
    const histogramQ = withBounds(`${filterOf(q)} stats count() by severity, bin(${width})`, boundsText(range));
    setHistogram((prev) => ({ q, data: prev?.data }));
    postQuery(histogramQ.q)
      .then(
        (body) => id === seq.current && setHistogram({ q, data: { ...span, width, rows: (body as StatsAnswer).stats ?? [] } }),
        (error: unknown) => id === seq.current && setHistogram({ q, error }),
      )
      .finally(done);
  }, [q, rKey, nonce, target, live]);

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

  const onFilter = useCallback(
    (clause: string) => {
      const next = addFilter(q, clause);
      setText(next);
      go(next, range);
    },
    [q, range, go, setText],
  );
  const onToggle = useCallback((id: string) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  }, []);
  const onSelect = useCallback((from: number, to: number) => go(q, { kind: 'custom', from, to }), [q, go]);
  const onLiveError = useCallback((error: ApiError) => {
    if (typeof error.details.position === 'number') setQueryError({ q, error, position: error.details.position });
  }, [q]);

  const toggleLive = () => {
    if (!live && draft !== q) go(draft, range);
    setQueryError(undefined);
    setLive(!live);
  };

  const editorError = queryError && queryError.q === draft && queryError.position !== null ? { position: queryError.position, message: queryError.error.message, text: queryError.q } : null;
  const answer = run?.q === q ? run.answer : undefined;
  const seed = answer?.kind === 'events' ? answer.events : [];
  // (A group by or stats answer keeps the last events' words.)
  const lastVocabulary = useRef<Vocabulary | undefined>(undefined);
  const vocabulary = useMemo(() => (answer?.kind === 'events' ? vocabularyOf(answer.events) : undefined), [answer]) ?? lastVocabulary.current;
  lastVocabulary.current = vocabulary;

  return (
    <section class="explorer">
      <h1>Explorer</h1>
      <form
        class="query-form"
        onSubmit={(e) => {
          e.preventDefault();
          go(draft, range);
        }}
      >
        <div class="query-line">
          <span id="soql-label" class="label">
            Query <span class="muted small">(SOQL; Ctrl+Enter or ⌘+Enter runs it)</span>
          </span>
          <div class="query-input">
            <SoqlEditor external={external} onChange={setDraft} onRun={(text) => go(text, range)} error={editorError} label="SOQL query" vocabulary={vocabulary} />
            <button type="submit" class="primary" data-testid="run">
              Run
            </button>
          </div>
        </div>
        <div class="row query-options">
          <TimeRangePicker range={range} onChange={(r) => go(draft, r)} disabled={live} />
          <button type="button" class={`live-toggle ${live ? 'on' : ''}`} aria-pressed={live} data-testid="live" onClick={toggleLive}>
            <span class="dot" aria-hidden="true" /> Live
          </button>
        </div>
      </form>
      <SavedSearches
        target={target}
        q={draft}
        range={range}
        onOpen={(search) => {
          // Filled in and run: the URL gets the query and range, so reload and back keep it.
          setText(search.q);
          go(search.q, timeRangeOf(search.range) ?? range);
        }}
      />
      {live ? (
        <>
          {queryError && <QueryErrorNote error={queryError.error} position={queryError.position} q={queryError.q} />}
          <LiveView key={`${q}|${target}`} q={q} seed={seed} onFilter={onFilter} onQueryError={onLiveError} />
        </>
      ) : (
        <>
          {run?.status === 'error' && <QueryErrorNote error={run.error} position={queryError?.q === run.q ? queryError.position : null} q={run.q} />}
          {histogram?.data && run?.status !== 'error' && <Histogram data={histogram.data} onSelect={onSelect} />}
          {histogram?.error !== undefined && run?.status !== 'error' && (
            <p class="note error small" role="alert">
              The histogram could not be drawn: {describeError(histogram.error)}
            </p>
          )}
          <div
            aria-busy={run?.status === 'loading'}
            class="results"
            data-testid="results"
            data-status={!run || run.status === 'loading' || answered !== seq.current ? 'loading' : run.status}
            data-q={run?.q}
            data-range={run?.range}
          >
            {run?.status === 'loading' && !answer && (
              <p class="note muted" role="status">
                Running the query…
              </p>
            )}
            {answer?.kind === 'events' && (
              <>
                <p class="small muted results-head" data-testid="results-count" role="status">
                  {answer.events.length === 0
                    ? 'No events in this time range match the query.'
                    : `${answer.events.length.toLocaleString()} events, newest first${answer.hasMore ? ' · more available' : ''}. Click a value to filter on it.`}
                </p>
                {answer.events.length > 0 && <EventsTable events={answer.events} expanded={expanded} onToggle={onToggle} onFilter={onFilter} caption="Events, newest first" />}
                {answer.hasMore && (
                  <div class="row load-more">
                    <button type="button" onClick={() => void loadMore()} disabled={run?.loadingMore} data-testid="load-more">
                      {run?.loadingMore ? 'Loading…' : 'Load more'}
                    </button>
                  </div>
                )}
                {run?.moreError !== undefined && <QueryErrorNote error={run.moreError} position={null} q={q} />}
              </>
            )}
            {answer?.kind === 'groups' && <GroupsView answer={answer} onFilter={onFilter} />}
            {answer?.kind === 'stats' && <StatsView answer={answer} />}
            {run && (
              <details class="sent small">
                <summary>Query sent, with the time range</summary>
                <code data-testid="sent-query">{run.sent.q}</code>
              </details>
            )}
          </div>
        </>
      )}
    </section>
  );
}
