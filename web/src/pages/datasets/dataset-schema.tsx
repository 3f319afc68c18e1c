// One dataset's schema page (/datasets/{name}): its payload keys with distinct counts and samples,
// the built-in fields, and links into the explorer.
import type { JSX } from 'preact';
import { ApiError } from '../../api/errors';
import { ErrorNote, Loading } from '../../components/notes';
import { formatCount, formatDateTime } from '../../components/units';
import { Link } from '../../router';
import { explorerHref } from './dataset-rules';
import { useDatasetSchema } from './use-dataset-schema';
import { useDatasetSummary } from './use-datasets';

/** A payload key as a SOQL field, when it can be written as one (dot paths of bare words, or one backquoted key). */
function payloadField(key: string): string | undefined {
  if (/^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/.test(key)) return `payload.${key}`;
  if (!key.includes('`') && !key.includes('.')) return `payload.\`${key}\``;
  return undefined;
}

export function DatasetSchema(props: { name: string }): JSX.Element {
  const { name } = props;
  const { schema, error } = useDatasetSchema(name);
  const summary = useDatasetSummary(name);
  const query = `dataset:${name}`;
  return (
    <section class="datasets-page">
      <p>
        <Link href="/datasets">← All datasets</Link>
      </p>
      <div class="page-head">
        <h1>
          Dataset <span class="mono">{name}</span>
        </h1>
        {!error && (
          <Link href={explorerHref(query)} class="button-link" data-testid="query-in-explorer">
            Query in explorer
          </Link>
        )}
      </div>
      {error instanceof ApiError && error.status === 404 ? (
        <p class="note error" role="alert">
          There is no active dataset named {name} in this project ({error.message}).
        </p>
      ) : (
        <ErrorNote error={error} />
      )}
      {summary && (
        <dl class="facts">
          <div>
            <dt>Events (24 h)</dt>
            <dd data-testid="events-24h">{formatCount(summary.events_last_24h)}</dd>
          </div>
          <div>
            <dt>Retention</dt>
            <dd>{formatCount(summary.retention_days)} days</dd>
          </div>
          <div>
            <dt>Default severity</dt>
            <dd>{summary.default_severity ?? 'none (info)'}</dd>
          </div>
          <div>
            <dt>Created</dt>
            <dd>{formatDateTime(summary.created_at)}</dd>
          </div>
        </dl>
      )}
      {!schema && !error && <Loading what="the schema" />}
      {schema && (
        <>
          <h2>Payload fields</h2>
          <p class="muted small">
            Keys found in the newest {formatCount(schema.sampled_events)} {schema.sampled_events === 1 ? 'event' : 'events'} of the last 24 hours, most distinct values first; samples are
            up to five values seen. Found {formatDateTime(schema.generated_at)} (kept up to 5 minutes).
            {schema.payload_fields_truncated && ' Discovery stopped at its bound: there are more keys than shown.'}
          </p>
          {schema.payload_fields.length === 0 ? (
            <p class="note muted">No payload keys in the last 24 hours.</p>
          ) : (
            <div class="table-wrap">
              <table class="schema" data-testid="payload-fields">
                <thead>
                  <tr>
                    <th scope="col">Key</th>
                    <th scope="col" class="num">
                      Distinct values
                    </th>
                    <th scope="col">Samples</th>
                    <th scope="col">Explore</th>
                  </tr>
                </thead>
                <tbody>
                  {schema.payload_fields.map((f) => {
                    const field = payloadField(f.key);
                    return (
                      <tr key={f.key}>
                        <th scope="row" class="mono">
                          {f.key}
                        </th>
                        <td class="num">{formatCount(f.cardinality)}</td>
                        <td class="samples">
                          {f.samples.map((s, i) => (
                            <code key={i} title={s}>
                              {s}
                            </code>
                          ))}
                        </td>
                        <td>
                          {field && (
                            <Link href={explorerHref(`${query} AND ${field} exists`)} title={`Events of ${name} that have ${field}`}>
                              events with it
                            </Link>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
          <h2>Built-in fields</h2>
          <div class="table-wrap">
            <table class="schema" data-testid="canonical-fields">
              <thead>
                <tr>
                  <th scope="col">Field</th>
                  <th scope="col">Type</th>
                </tr>
              </thead>
              <tbody>
                {schema.canonical_fields.map((f) => (
                  <tr key={f.name}>
                    <th scope="row" class="mono">
                      {f.name}
                    </th>
                    <td>{f.type}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
