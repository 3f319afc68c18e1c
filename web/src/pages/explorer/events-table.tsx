// The events table: ts, severity, dataset, event, source, message; a row expands to the event's
// whole JSON, and every value (in the row or the JSON) is a button adding `field:value` to the
// query. Rows are keyed by event_id and skip re-rendering unless their own event or state
// changes, so appending a page or a live batch renders only the new rows.
import { Component, Fragment, type JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { paths } from '../../api/schema';
import { filterClause } from './soql-text';

export type ApiEvent = paths['/v1/query']['post']['responses'][200]['content']['application/json'] extends infer A
  ? A extends { events: Array<infer E> }
    ? E
    : never
  : never;

export type OnFilter = (clause: string) => void;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** `2026-11-25 20:28:01.123` in the reader's time zone (the ISO value is in the title). */
export function localTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A value that filters on click; plain text when SOQL cannot express the filter. */
function Value(props: { path: string[]; value: unknown; text: string; onFilter: OnFilter; class?: string; title?: string }): JSX.Element {
  const clause = filterClause(props.path, props.value);
  if (!clause) return <span class={props.class}>{props.text}</span>;
  return (
    <button type="button" class={`val ${props.class ?? ''}`} title={props.title ?? `Add ${clause} to the query`} onClick={() => props.onFilter(clause)}>
      {props.text}
    </button>
  );
}

/** The event's JSON, pretty-printed, with each leaf a filter button. */
function JsonValue(props: { value: unknown; path: string[]; indent: number; onFilter: OnFilter }): JSX.Element {
  const { value, path, indent, onFilter } = props;
  const pad = '  '.repeat(indent + 1);
  const end = '  '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return <>[]</>;
    return (
      <>
        {'[\n'}
        {value.map((v, i) => (
          <Fragment key={i}>
            {pad}
            <JsonValue value={v} path={[...path, String(i)]} indent={indent + 1} onFilter={onFilter} />
            {i < value.length - 1 ? ',\n' : '\n'}
          </Fragment>
        ))}
        {end}]
      </>
    );
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return <>{'{}'}</>;
    return (
      <>
        {'{\n'}
        {entries.map(([k, v], i) => (
          <Fragment key={k}>
            {pad}
            <span class="json-key">{JSON.stringify(k)}</span>
            {': '}
            <JsonValue value={v} path={[...path, k]} indent={indent + 1} onFilter={onFilter} />
            {i < entries.length - 1 ? ',\n' : '\n'}
          </Fragment>
        ))}
        {end}
        {'}'}
      </>
    );
  }
  // Top-level org_id / project_id come from the token: not a filter (soql_reserved_field).
  const leafPath = path.length === 1 && (path[0] === 'org_id' || path[0] === 'project_id') ? [] : path;
  return <Value path={leafPath} value={value} text={JSON.stringify(value)} onFilter={onFilter} class={`json-${value === null ? 'null' : typeof value}`} />;
}

export function EventJson(props: { event: ApiEvent; onFilter: OnFilter }): JSX.Element {
  return (
    <pre class="event-json" data-testid="event-json">
      <JsonValue value={props.event} path={[]} indent={0} onFilter={props.onFilter} />
    </pre>
  );
}

interface RowProps {
  event: ApiEvent;
  expanded: boolean;
  onToggle: (id: string) => void;
  onFilter: OnFilter;
}

/** One event: its row and, expanded, its JSON (a wrapper the accessibility tree looks through). */
export class EventRow extends Component<RowProps> {
  override shouldComponentUpdate(next: RowProps): boolean {
    return next.event !== this.props.event || next.expanded !== this.props.expanded;
  }

  override render(): JSX.Element {
    const { event: e, expanded, onFilter } = this.props;
    const id = `ev-${e.event_id}`;
    return (
      <div class={expanded ? 'event open' : 'event'} role="presentation" data-event-id={e.event_id}>
        <div role="row" class="ev-row">
          <span role="cell" class="expand">
            <button type="button" aria-expanded={expanded} aria-controls={id} aria-label={expanded ? 'Hide the event JSON' : 'Show the event JSON'} onClick={() => this.props.onToggle(e.event_id)}>
              {expanded ? '▾' : '▸'}
            </button>
          </span>
          <span role="cell" class="ts mono">
            <Value path={['ts']} value={e.ts} text={localTime(e.ts)} onFilter={onFilter} title={`${e.ts} (UTC): add ts:${e.ts} to the query`} />
          </span>
          <span role="cell" class="severity">
            <Value path={['severity']} value={e.severity} text={e.severity} onFilter={onFilter} class={`sev sev-${e.severity}`} />
          </span>
          <span role="cell" class="dataset">
            <Value path={['dataset']} value={e.dataset} text={e.dataset} onFilter={onFilter} />
          </span>
          <span role="cell" class="event-name">
            <Value path={['event']} value={e.event} text={e.event} onFilter={onFilter} />
          </span>
          <span role="cell" class="source">
            {e.source === undefined ? <span class="muted">—</span> : <Value path={['source']} value={e.source} text={e.source} onFilter={onFilter} />}
          </span>
          <span role="cell" class="message">
            <Value path={['message']} value={e.message} text={e.message} onFilter={onFilter} />
          </span>
        </div>
        {expanded && (
          <div role="row" class="json-row" id={id}>
            <span role="cell">
              <EventJson event={e} onFilter={onFilter} />
            </span>
          </div>
        )}
      </div>
    );
  }
}

const firstSlice = 150;
const slice = 150;

/**
 * The events as an ARIA table of rows laid out with CSS grid, not a <table>: a table lays out
 * all its rows again when one is added (column widths), and its rows cannot skip the layout
 * and paint of those out of view (`content-visibility: auto`); with both, a live tail of 200
 * events/s kept the main thread busy 90% of the time with 1,000 rows (bench:dashboard).
 */
export function EventsTable(props: {
  events: ApiEvent[];
  expanded: ReadonlySet<string>;
  onToggle: (id: string) => void;
  onFilter: OnFilter;
  caption: string;
}): JSX.Element {
  // Many new rows at once (Live on with 1,000 rows) are added a slice per animation frame, so
  // no frame waits for all of them; rows already shown stay.
  const [limit, setLimit] = useState(firstSlice);
  const all = props.events.length - limit <= slice;
  useEffect(() => {
    if (all) {
      if (limit < props.events.length) setLimit(props.events.length);
      return;
    }
    const frame = requestAnimationFrame(() => setLimit((n) => n + slice));
    return () => cancelAnimationFrame(frame);
  }, [all, limit, props.events.length]);
  const shown = all ? props.events : props.events.slice(0, limit);
  return (
    <div class="table-wrap events-wrap">
      <div role="table" class="events" aria-label={props.caption} aria-rowcount={props.events.length + 1} data-testid="events">
        <div role="rowgroup" class="events-head">
          <div role="row" class="ev-row">
            <span role="columnheader">
              <span class="sr-only">JSON</span>
            </span>
            <span role="columnheader">Time</span>
            <span role="columnheader">Severity</span>
            <span role="columnheader">Dataset</span>
            <span role="columnheader">Event</span>
            <span role="columnheader">Source</span>
            <span role="columnheader">Message</span>
          </div>
        </div>
        <div role="rowgroup" class="events-body">
          {shown.map((e) => (
            <EventRow key={e.event_id} event={e} expanded={props.expanded.has(e.event_id)} onToggle={props.onToggle} onFilter={props.onFilter} />
          ))}
        </div>
      </div>
    </div>
  );
}
