// The Datasets list: each dataset with its events of 24 hours, an hourly sparkline, retention,
// default severity; Edit and Archive for roles with logs:write, and the create form.
import type { JSX } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm';
import { ErrorNote, Loading } from '../../components/notes';
import { PlanErrorNote } from '../../components/quota-error';
import { Sparkline } from '../../components/sparkline';
import { formatCount, formatDateTime } from '../../components/units';
import { Link } from '../../router';
import { useSession } from '../../session';
import { CreateDataset } from './create-dataset';
import { reservedName, type Summary } from './dataset-rules';
import { EditDataset } from './edit-dataset';
import { useArchiveDataset } from './use-dataset-writes';
import { useDatasets, usePlanRetention } from './use-datasets';
import { useHourlyActivity, type Activity } from './use-hourly-activity';

export function DatasetList(): JSX.Element {
  const { can } = useSession();
  const canWrite = can('logs:write');
  const retention = usePlanRetention();
  const list = useDatasets();
  const hourly = useHourlyActivity();
  const { datasets, error } = list;
  const { activity, error: activityError } = hourly;
  const [notice, setNotice] = useState<string>();
  const archive = useArchiveDataset();

  const loadAll = useCallback(async () => {
    const names = await list.reload();
    if (names) await hourly.load(names.map((d) => d.name));
  }, [list.reload, hourly.load]);

  useEffect(() => {
    void loadAll();
  }, [loadAll]);

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
                  archive={archive}
                  onChanged={async (message, rename) => {
                    if (rename) hourly.renamed(rename.from, rename.to);
                    setNotice(message);
                    await list.reload();
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
            await list.reload();
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
  archive: (name: string) => Promise<void>;
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
                  await props.archive(d.name);
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
