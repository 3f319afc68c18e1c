// Datasets (issue #18): the project's datasets with their last 24 hours (GET /v1/datasets and one
// SOQL `stats count() by dataset, bin(1h)` query), create / edit / archive for roles with
// logs:write, and each dataset's schema (GET /v1/datasets/{name}/schema).
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { api, data } from '../../api/client';
import { ApiError } from '../../api/errors';
import { ConfirmButton } from '../../components/confirm';
import { ErrorNote, Loading } from '../../components/notes';
import { PlanErrorNote } from '../../components/quota-error';
import { Sparkline } from '../../components/sparkline';
import { formatCount, formatDateTime } from '../../components/units';
import { Link } from '../../router';
import type { Route } from '../../router';
import { useSession } from '../../session';
import './datasets.css';

type Summary = components['schemas']['DatasetSummary'];
type Severity = NonNullable<Summary['default_severity']>;
const severities: Severity[] = ['debug', 'info', 'warn', 'error', 'fatal'];
/** The reserved dataset (DECISIONS.md §9): system-managed, never renamed or archived. */
const reservedName = 'default';
/** SPEC.md §2.3's name rule, for the browser's own check (escaped for the `v` flag of `pattern`). */
const namePattern = '[a-z0-9]|[a-z0-9][a-z0-9_\\-]{0,62}[a-z0-9]';
const nameHint = 'Lower-case letters, digits, _ and -; 1 to 64 characters; starts and ends with a letter or digit.';

const hourMs = 3_600_000;
const hours = 24;
/** 24 bins per dataset: 40 datasets stay under the 1,000 rows of one stats answer. */
const datasetsPerQuery = 40;

/** The explorer's address with a query in it (the explorer reads `q`). */
export function explorerHref(q: string): string {
  return `/?q=${encodeURIComponent(q)}`;
}

export function DatasetsPage(props: { route: Route }): JSX.Element {
  const { path } = props.route;
  if (path === '/datasets') return <DatasetList />;
  let name = path.slice('/datasets/'.length);
  try {
    name = decodeURIComponent(name);
  } catch {
    // a malformed escape: show the name as written; the API answers 404 for it
  }
  return <DatasetSchema key={name} name={name} />;
}

/** Counts per hour of the last 24 whole hours (UTC-aligned bins, the current hour last). */
interface Activity {
  /** Start of each hour, in seconds (uPlot's x unit). */
  times: number[];
  byName: Map<string, number[]>;
}

async function hourlyActivity(names: string[], now = Date.now()): Promise<Activity> {
  const first = Math.floor(now / hourMs) * hourMs - (hours - 1) * hourMs;
  const end = first + hours * hourMs;
  const times = Array.from({ length: hours }, (_, i) => (first + i * hourMs) / 1000);
  const byName = new Map(names.map((n) => [n, new Array<number>(hours).fill(0)]));
  for (let i = 0; i < names.length; i += datasetsPerQuery) {
    const chunk = names.slice(i, i + datasetsPerQuery);
    const q = `dataset in (${chunk.map((n) => JSON.stringify(n)).join(', ')}) AND ts >= ${new Date(first).toISOString()} AND ts < ${new Date(end).toISOString()} stats count() by dataset, bin(1h)`;
    const answer = await data(api.POST('/v1/query', { body: { q } }));
    if (!('stats' in answer)) continue;
    for (const row of answer.stats) {
      const series = byName.get(String(row.by.dataset));
      const slot = (Date.parse(String(row.by['bin(1h)'])) - first) / hourMs;
      if (series && Number.isInteger(slot) && slot >= 0 && slot < hours) series[slot] = row.values['count()'] ?? 0;
    }
  }
  return { times, byName };
}

/** The plan's retention (the most a dataset may keep), when the role may read billing. */
function usePlanRetention(): { days: number; plan: string } | undefined {
  const { can } = useSession();
  const [retention, setRetention] = useState<{ days: number; plan: string }>();
  useEffect(() => {
    if (!can('billing:read')) return;
    data(api.GET('/v1/billing'))
      .then((b) => setRetention({ days: b.plan_limits.retention_days, plan: b.plan }))
      .catch(() => undefined);
  }, [can]);
  return retention;
}

function DatasetList(): JSX.Element {
  const { can } = useSession();
  const canWrite = can('logs:write');
  const retention = usePlanRetention();
  const [datasets, setDatasets] = useState<Summary[]>();
  const [error, setError] = useState<unknown>();
  const [activity, setActivity] = useState<Activity>();
  const [activityError, setActivityError] = useState<unknown>();
  const [notice, setNotice] = useState<string>();

  const loadList = useCallback(async () => {
    try {
      const list = (await data(api.GET('/v1/datasets'))).datasets;
      setDatasets(list);
      setError(undefined);
      return list;
    } catch (e) {
      setError(e);
      return undefined;
    }
  }, []);

  const loadAll = useCallback(async () => {
    const list = await loadList();
    if (!list) return;
    if (list.length === 0) return setActivity({ times: [], byName: new Map() });
    try {
      setActivity(await hourlyActivity(list.map((d) => d.name)));
      setActivityError(undefined);
    } catch (e) {
      setActivityError(e);
    }
  }, [loadList]);

  useEffect(() => {
    void loadAll();
  }, [loadAll]);

  const renamed = (from: string, to: string) => {
    setActivity((a) => {
      if (!a) return a;
      const byName = new Map(a.byName);
      const series = byName.get(from);
      byName.delete(from);
      if (series) byName.set(to, series);
      return { ...a, byName };
    });
  };

  return (
    <section class="datasets-page">
      <div class="page-head">
        <h1>Datasets</h1>
        <button type="button" onClick={() => void loadAll()}>
          Refresh
        </button>
      </div>
      <p class="muted small">Events arrive in datasets (POST /v1/datasets/{'{name}'}/ingest creates one on its first event). Counts cover the last 24 hours; the line shows them hour by hour.</p>
      {notice && (
        <p class="note ok" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={error} />
      {datasets === undefined && !error && <Loading what="datasets" />}
      {activityError !== undefined && <PlanErrorNote error={activityError} prefix="The hourly counts could not be loaded" />}
      {datasets && datasets.length === 0 && <p class="note muted">No datasets yet: send events to one, or create one below.</p>}
      {datasets && datasets.length > 0 && (
        <div class="table-wrap">
          <table class="datasets">
            <thead>
              <tr>
                <th scope="col">Dataset</th>
                <th scope="col" class="num">
                  Events (24 h)
                </th>
                <th scope="col">By hour</th>
                <th scope="col" class="num">
                  Retention
                </th>
                <th scope="col">Default severity</th>
                <th scope="col">Created</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {datasets.map((d) => (
                <DatasetRow
                  key={d.name}
                  dataset={d}
                  activity={activity}
                  canWrite={canWrite}
                  maxRetention={retention?.days}
                  onChanged={async (message, rename) => {
                    if (rename) renamed(rename.from, rename.to);
                    setNotice(message);
                    await loadList();
                  }}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {canWrite && (
        <CreateDataset
          retention={retention}
          onCreated={async (name) => {
            setNotice(`Dataset ${name} created.`);
            await loadList();
          }}
        />
      )}
    </section>
  );
}

function DatasetRow(props: {
  dataset: Summary;
  activity: Activity | undefined;
  canWrite: boolean;
  maxRetention: number | undefined;
  onChanged: (message: string, rename?: { from: string; to: string }) => Promise<void>;
}): JSX.Element {
  const d = props.dataset;
  const { activity } = props;
  const values = activity ? (activity.byName.get(d.name) ?? new Array<number>(activity.times.length).fill(0)) : undefined;
  const total = values?.reduce((a, b) => a + b, 0) ?? 0;
  const peak = values ? Math.max(0, ...values) : 0;
  return (
    <tr data-testid={`dataset-${d.name}`}>
      <th scope="row">
        <Link href={`/datasets/${encodeURIComponent(d.name)}`}>{d.name}</Link>
        {d.name === reservedName && <div class="muted small">system-managed</div>}
      </th>
      <td class="num" data-testid="events-24h">
        {formatCount(d.events_last_24h)}
      </td>
      <td>
        {activity && values ? (
          <Sparkline
            times={activity.times}
            values={values}
            testId={`sparkline-${d.name}`}
            label={`${d.name}, events per hour over the last 24 hours: ${formatCount(total)} in all, at most ${formatCount(peak)} in one hour`}
          />
        ) : (
          <span class="muted small">…</span>
        )}
      </td>
      <td class="num" data-testid="retention">
        {formatCount(d.retention_days)} {d.retention_days === 1 ? 'day' : 'days'}
      </td>
      <td>{d.default_severity ?? <span class="muted">info (default)</span>}</td>
      <td class="nowrap">{formatDateTime(d.created_at)}</td>
      {props.canWrite && (
        <td>
          {d.name === reservedName ? (
            <span class="muted small">cannot be renamed or archived</span>
          ) : (
            <div class="row keep">
              <EditDataset dataset={d} maxRetention={props.maxRetention} onSaved={props.onChanged} />
              <ConfirmButton
                label="Archive"
                title={`Archive dataset ${d.name}?`}
                confirmLabel="Archive dataset"
                danger
                testId={`archive-${d.name}`}
                action={async () => {
                  await data(api.DELETE('/v1/datasets/{name}', { params: { path: { name: d.name } } }));
                  await props.onChanged(`Dataset ${d.name} archived.`);
                }}
              >
                <p>
                  <strong>{d.name}</strong> leaves this list; its events leave queries and live tail, and ingest to it is refused (409). The name stays taken. Archiving cannot be
                  undone from the dashboard.
                </p>
              </ConfirmButton>
            </div>
          )}
        </td>
      )}
    </tr>
  );
}

/** Name, retention and default severity of one dataset, in a modal dialog (PATCH /v1/datasets/{name}). */
function EditDataset(props: { dataset: Summary; maxRetention: number | undefined; onSaved: (message: string, rename?: { from: string; to: string }) => Promise<void> }): JSX.Element {
  const d = props.dataset;
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState(false);
  const [name, setName] = useState(d.name);
  const [retention, setRetention] = useState(String(d.retention_days));
  const [severity, setSeverity] = useState<string>(d.default_severity ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (open) {
      setName(d.name);
      setRetention(String(d.retention_days));
      setSeverity(d.default_severity ?? '');
      setError(undefined);
      dialog.current?.showModal();
    } else dialog.current?.close();
  }, [open]);

  const save = async (event: Event) => {
    event.preventDefault();
    const body: { name?: string; retention_days?: number; default_severity?: Severity | null } = {};
    if (name !== d.name) body.name = name;
    if (Number(retention) !== d.retention_days) body.retention_days = Number(retention);
    if (severity !== (d.default_severity ?? '')) body.default_severity = severity === '' ? null : (severity as Severity);
    if (Object.keys(body).length === 0) return setOpen(false);
    setBusy(true);
    setError(undefined);
    try {
      const saved = await data(api.PATCH('/v1/datasets/{name}', { params: { path: { name: d.name } }, body }));
      setOpen(false);
      await props.onSaved(`Dataset ${saved.name} saved.`, body.name ? { from: d.name, to: saved.name } : undefined);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const id = `edit-${d.name}`;
  return (
    <>
      <button type="button" aria-label={`Edit ${d.name}`} data-testid={`edit-${d.name}`} onClick={() => setOpen(true)}>
        Edit
      </button>
      <dialog ref={dialog} onClose={() => setOpen(false)} aria-labelledby={`${id}-title`}>
        <form class="stack" onSubmit={save}>
          <h2 id={`${id}-title`}>Edit dataset {d.name}</h2>
          <label>
            Name
            <input value={name} required maxLength={64} pattern={namePattern} title={nameHint} onInput={(e) => setName(e.currentTarget.value)} />
          </label>
          <p class="muted small">Renaming keeps every event; queries, tail and ingest use the new name from now on.</p>
          <label>
            Retention (days)
            <input type="number" inputMode="numeric" min={1} max={props.maxRetention} required value={retention} onInput={(e) => setRetention(e.currentTarget.value)} />
          </label>
          {props.maxRetention !== undefined && <p class="muted small">Your plan keeps events at most {props.maxRetention} days.</p>}
          <label>
            Default severity
            <select value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
              <option value="">none (info)</option>
              {severities.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <PlanErrorNote error={error} />
          <div class="row end">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={busy}>
              Save
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** POST /v1/datasets: a dataset before its first event (with its retention and default severity). */
function CreateDataset(props: { retention: { days: number; plan: string } | undefined; onCreated: (name: string) => Promise<void> }): JSX.Element {
  const [name, setName] = useState('');
  const [retention, setRetention] = useState('');
  const [severity, setSeverity] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await data(
        api.POST('/v1/datasets', {
          body: { name, ...(retention ? { retention_days: Number(retention) } : {}), ...(severity ? { default_severity: severity as Severity } : {}) },
        }),
      );
      setName('');
      setRetention('');
      setSeverity('');
      await props.onCreated(created.name);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const { retention: plan } = props;
  return (
    <section aria-labelledby="new-dataset">
      <h2 id="new-dataset">New dataset</h2>
      <form class="create-dataset" onSubmit={create}>
        <label>
          Name
          <input value={name} required maxLength={64} pattern={namePattern} title={nameHint} autoComplete="off" onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Retention (days)
          <input
            type="number"
            inputMode="numeric"
            min={1}
            max={plan?.days}
            value={retention}
            placeholder={plan ? `plan's ${plan.days}` : "plan's"}
            onInput={(e) => setRetention(e.currentTarget.value)}
          />
        </label>
        <label>
          Default severity
          <select value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
            <option value="">none (info)</option>
            {severities.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" class="primary" disabled={busy}>
          Create dataset
        </button>
      </form>
      <p class="muted small">{nameHint} Retention defaults to the plan's and may not exceed it{plan ? ` (${plan.days} days on ${plan.plan})` : ''}.</p>
      <PlanErrorNote error={error} />
    </section>
  );
}

/** A payload key as a SOQL field, when it can be written as one (dot paths of bare words, or one backquoted key). */
function payloadField(key: string): string | undefined {
  if (/^[A-Za-z0-9_@$-]+(\.[A-Za-z0-9_@$-]+)*$/.test(key)) return `payload.${key}`;
  if (!key.includes('`') && !key.includes('.')) return `payload.\`${key}\``;
  return undefined;
}

const loadSchema = (name: string) => data(api.GET('/v1/datasets/{name}/schema', { params: { path: { name } } }));
type Schema = Awaited<ReturnType<typeof loadSchema>>;

function DatasetSchema(props: { name: string }): JSX.Element {
  const { name } = props;
  const [schema, setSchema] = useState<Schema>();
  const [summary, setSummary] = useState<Summary>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    loadSchema(name).then(setSchema, setError);
    data(api.GET('/v1/datasets'))
      .then((list) => setSummary(list.datasets.find((d) => d.name === name)))
      .catch(() => undefined);
  }, [name]);
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
