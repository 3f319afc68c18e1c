// Live tail: the same query streamed (tail-stream.ts), newest rows on top. Arrivals are batched
// per animation frame. A reader who has scrolled down into the rows keeps them where they are:
// new rows wait behind an "N new events" button (and join when they scroll back up); Pause
// holds them the same way. Rows kept and rows waiting are each capped at 1,000 (the oldest go).
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, describeError } from '../../api/errors';
import { Link } from '../../router';
import { EventsTable, type ApiEvent, type OnFilter } from './events-table';
import { openTail, type TailStatus } from './tail-stream';

export const MAX_LIVE_ROWS = 1000;

/** How long ago, in words: `4 s`, `2 min`. */
function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 90 ? `${s} s` : `${Math.round(s / 60)} min`;
}

function Connection(props: { status: TailStatus }): JSX.Element {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  const { status } = props;
  const now = Date.now();
  let state: string;
  let text: string;
  switch (status.kind) {
    case 'connecting':
      state = 'connecting';
      text = status.attempt ? 'Reconnecting…' : 'Connecting…';
      break;
    case 'connected':
      state = 'connected';
      text = status.lastHeartbeat === null ? `Connected ${ago(now - status.since)} ago · no heartbeat yet` : `Connected · last heartbeat ${ago(now - status.lastHeartbeat)} ago`;
      break;
    case 'reconnecting':
      state = 'reconnecting';
      text = `Reconnecting in ${ago(Math.max(0, status.at - now))} (${status.reason})`;
      break;
    case 'failed':
      state = 'stopped';
      text = 'Stopped';
      break;
  }
  return (
    <span class={`connection ${state}`} role="status" data-testid="connection" data-state={state}>
      <span class="dot" aria-hidden="true" />
      {text}
    </span>
  );
}

/** A refusal of the tail in words: which plan, how many sessions, what to change. */
export function TailRefusal(props: { error: ApiError; onRetry: () => void }): JSX.Element {
  const { error } = props;
  if (error.code === 'tier_upgrade_required') {
    const plan = typeof error.details.required_plan === 'string' ? error.details.required_plan : undefined;
    return (
      <div class="note error" role="alert" data-testid="tail-refusal">
        <p>
          <strong>Live tail is not part of this organisation's plan.</strong>{' '}
          {plan ? `It needs the ${plan} plan (Logs Pro) or a higher one.` : 'No plan on this installation includes it.'} The server said: “{error.message}”.
        </p>
        <p>
          Searching stored events works on every plan: turn Live off and run the query. An Owner can change the plan; <Link href="/usage">see usage and plan</Link>.
        </p>
      </div>
    );
  }
  if (error.code === 'tail_session_limit_exceeded') {
    const limit = typeof error.details.limit === 'number' ? error.details.limit : 3;
    return (
      <div class="note error" role="alert" data-testid="tail-refusal">
        <p>
          <strong>Too many live tails are open.</strong> At most {limit} live tail sessions may be open at once for one API token on one server, and this
          dashboard's token already has {limit}.
        </p>
        <p>
          Close live tail in another tab or window (or stop a script tailing with the same token), then{' '}
          <button type="button" onClick={props.onRetry}>
            try again
          </button>
          .
        </p>
      </div>
    );
  }
  if (error.code === 'soql_tail_aggregation_unsupported') {
    return (
      <p class="note error" role="alert" data-testid="tail-refusal">
        Live tail streams events one by one, so a <code>group by</code> or <code>stats</code> query cannot be tailed: remove that clause to go live. ({error.message})
      </p>
    );
  }
  return (
    <p class="note error" role="alert" data-testid="tail-refusal">
      Live tail stopped: {describeError(error)}{' '}
      <button type="button" onClick={props.onRetry}>
        Try again
      </button>
    </p>
  );
}

export function LiveView(props: { q: string; seed: ApiEvent[]; onFilter: OnFilter; onQueryError: (error: ApiError) => void }): JSX.Element {
  const [status, setStatus] = useState<TailStatus>({ kind: 'connecting', attempt: 0 });
  const [paused, setPaused] = useState(false);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(new Set());
  const [, setVersion] = useState(0);
  const [attempt, setAttempt] = useState(0);
  const rows = useRef<ApiEvent[]>(props.seed.slice(0, MAX_LIVE_ROWS));
  /** Arrived while paused or scrolled down, newest first. */
  const held = useRef<ApiEvent[]>([]);
  const heldCount = useRef(0);
  const incoming = useRef<ApiEvent[]>([]);
  const frame = useRef(0);
  const pausedRef = useRef(false);
  const atTop = useRef(true);
  const list = useRef<HTMLDivElement>(null);
  const received = useRef(0);

  const merge = useCallback(() => {
    if (held.current.length) rows.current = [...held.current, ...rows.current].slice(0, MAX_LIVE_ROWS);
    held.current = [];
    heldCount.current = 0;
  }, []);

  const flush = useCallback(() => {
    frame.current = 0;
    const batch = incoming.current.splice(0).reverse();
    if (!batch.length) return;
    if (pausedRef.current || !atTop.current) {
      held.current = [...batch, ...held.current].slice(0, MAX_LIVE_ROWS);
      heldCount.current += batch.length;
    } else {
      rows.current = [...batch, ...rows.current].slice(0, MAX_LIVE_ROWS);
    }
    setVersion((v) => v + 1);
  }, []);

  useEffect(() => {
    const seen = new Set(rows.current.map((e) => e.event_id));
    const close = openTail({
      q: props.q,
      onEvents: (events) => {
        for (const e of events) {
          if (seen.has(e.event_id)) continue;
          seen.add(e.event_id);
          incoming.current.push(e);
        }
        received.current += events.length;
        // Bounded even when frames do not run (a hidden tab): only the newest can be shown.
        if (incoming.current.length > MAX_LIVE_ROWS) incoming.current.splice(0, incoming.current.length - MAX_LIVE_ROWS);
        if (seen.size > 4 * MAX_LIVE_ROWS) {
          seen.clear();
          for (const e of [...rows.current, ...held.current, ...incoming.current]) seen.add(e.event_id);
        }
        if (!frame.current) frame.current = requestAnimationFrame(flush);
      },
      onStatus: (s) => {
        setStatus(s);
        if (s.kind === 'failed' && (s.error.code === 'soql_parse_error' || s.error.code === 'soql_reserved_field')) props.onQueryError(s.error);
      },
    });
    return () => {
      close();
      cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, [props.q, attempt]);

  // Scrolled down into the rows: hold new ones; back at the top: let them in.
  useEffect(() => {
    const onScroll = () => {
      const top = list.current ? list.current.getBoundingClientRect().top > -24 : true;
      if (top === atTop.current) return;
      atTop.current = top;
      if (top && !pausedRef.current && held.current.length) {
        merge();
        setVersion((v) => v + 1);
      } else {
        setVersion((v) => v + 1);
      }
    };
    addEventListener('scroll', onScroll, { passive: true });
    return () => removeEventListener('scroll', onScroll);
  }, []);

  const togglePause = () => {
    const next = !paused;
    pausedRef.current = next;
    setPaused(next);
    if (!next && atTop.current) merge();
  };
  const jumpUp = () => {
    merge();
    setVersion((v) => v + 1);
    list.current?.scrollIntoView({ block: 'start' });
    atTop.current = true;
  };
  const onToggle = useCallback((id: string) => {
    setExpanded((prev) => {
      const next = new Set(prev);
      if (!next.delete(id)) next.add(id);
      return next;
    });
  }, []);

  const waiting = heldCount.current;
  const dropped = waiting - held.current.length;
  return (
    <section class="live" aria-label="Live tail">
      <div class="row live-bar">
        <Connection status={status} />
        <button type="button" aria-pressed={paused} data-testid="pause" onClick={togglePause} disabled={status.kind === 'failed'}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        {paused ? (
          <span class="small paused-note" role="status" data-testid="paused-note">
            Paused: {waiting.toLocaleString()} new {waiting === 1 ? 'event' : 'events'} waiting
            {dropped > 0 ? ` (only the newest ${MAX_LIVE_ROWS.toLocaleString()} are kept)` : ''}
          </span>
        ) : (
          <span class="small muted" data-testid="live-count">
            {rows.current.length.toLocaleString()} events shown, newest first (at most {MAX_LIVE_ROWS.toLocaleString()} kept)
          </span>
        )}
      </div>
      {status.kind === 'failed' && status.error.code !== 'soql_parse_error' && status.error.code !== 'soql_reserved_field' && (
        <TailRefusal error={status.error} onRetry={() => setAttempt((n) => n + 1)} />
      )}
      {!paused && waiting > 0 && (
        <button type="button" class="new-events primary" data-testid="new-events" onClick={jumpUp}>
          ↑ {waiting.toLocaleString()} new {waiting === 1 ? 'event' : 'events'}
          {dropped > 0 ? ` (newest ${MAX_LIVE_ROWS.toLocaleString()} kept)` : ''}
        </button>
      )}
      <div ref={list} class="live-rows">
        {rows.current.length === 0 ? (
          <p class="muted note">Waiting for new events that match the query…</p>
        ) : (
          <EventsTable events={rows.current} expanded={expanded} onToggle={onToggle} onFilter={props.onFilter} caption="Live events, newest first" />
        )}
      </div>
    </section>
  );
}
