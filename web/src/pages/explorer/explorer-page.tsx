// The explorer, the dashboard's home page: a SOQL editor, a time range, the volume
// histogram, and the answer of POST /v1/query (events with load-more by cursor, or a group by /
// stats table and chart); Live switches the same query to POST /v1/query/tail. The query and
// range live in the URL (?q=…&range=1h, or range=custom&from=…&to=…), so reload and back keep them.
// The range is added to the query sent as `ts >= … AND (<filter>) <group by | stats>`
// (soql-text.ts withBounds); parse errors are mapped back to the reader's text. Requests:
// use-query-run.ts (the query, load more), use-histogram.ts, and the saved searches' hooks.
import type { JSX } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describeError, type ApiError } from '../../api/errors';
import { navigate, type Route } from '../../router';
import { useSession } from '../../session';
import { GroupsView, StatsView } from './aggregate';
import { SoqlEditor } from './editor';
import { EventsTable } from './events-table';
import { Histogram } from './histogram';
import { LiveView } from './live-view';
import { type Vocabulary } from './soql-complete';
import { addFilter, rangeFromParams, rangeParams, type TimeRange } from './soql-text';
import { TimeRangePicker } from './time-range';
import { QueryErrorNote } from './query-error-note';
import { useHistogram } from './use-histogram';
import { useQueryRun, type QueryError } from './use-query-run';
import { vocabularyOf } from './vocabulary';
import { SavedSearches } from './saved-searches';
import { timeRangeOf } from './saved-range';
import './explorer.css';
import './saved-searches.css';

function rangeKey(range: TimeRange): string {
  return new URLSearchParams(rangeParams(range)).toString();
}

function urlFor(q: string, range: TimeRange): string {
  const params = new URLSearchParams({ ...(q ? { q } : {}), ...rangeParams(range) });
  return `/?${params.toString()}`;
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
  /** A live tail's refusal of the query, with its position. */
  const [liveError, setLiveError] = useState<QueryError | undefined>();
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());

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

  // The query and its histogram, run for each (query, range, re-run, target) while not live.
  const runKey = `${target}|${rKey}|${nonce}|${q}`;
  const query = useQueryRun(q, range, rKey, runKey, !live);
  const histogramRun = useHistogram(q, range, runKey, !live);
  const { histogram } = histogramRun;
  const { run, loadMore } = query;
  /** Both have answered for the latest run (tests and the bench wait for it). */
  const answered = query.settled === runKey && histogramRun.settled === runKey;
  useEffect(() => setExpanded(new Set()), [runKey, live]);
  const queryError = live ? liveError : query.error;

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
    if (typeof error.details.position === 'number') setLiveError({ q, error, position: error.details.position });
  }, [q]);

  const toggleLive = () => {
    if (!live && draft !== q) go(draft, range);
    setLiveError(undefined);
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
            data-status={!run || run.status === 'loading' || !answered ? 'loading' : run.status}
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
