// Usage and plan: the organisation's quotas this period (GET /v1/usage, usage:read)
// as bars, the plan's other limits (GET /v1/billing, billing:read: Owner and Admin), and what
// happens at each limit. Requests: use-usage.ts.
import type { JSX } from 'preact';
import { ErrorNote, Loading } from '../../components/notes';
import { formatMetric, metricNames } from '../../components/quota-error';
import { formatBytes, formatCount, formatUtcDate } from '../../components/units';
import { Link } from '../../router';
import type { Route } from '../../router';
import { useSession } from '../../session';
import { useBilling, useDatasetCount, useUsage, type Billing } from './use-usage';
import './usage.css';

interface Meter {
  metric: string;
  used: number;
  limit: number | null;
  cumulative: boolean;
}

/** What a metric counts and what happens at its limit; `resets` is the end of the period. */
function explain(metric: string, resets: string): string {
  switch (metric) {
    case 'storage_bytes':
      return 'Media files, counted until they are purged (deleted files too, for the 30 days they can still be restored). It does not reset each month. At the limit, an upload that would pass it is refused with quota_exceeded (HTTP 402): delete files (they stop counting once purged) or upgrade the plan.';
    case 'events_month':
      return `Events accepted by ingest (native and OTLP) this calendar month (UTC). At the limit, ingest is refused with quota_exceeded (HTTP 402) and the events are not stored, until the count starts again on ${resets} or the plan is upgraded.`;
    case 'queries_month':
      return `SOQL queries run this calendar month (UTC): the explorer, the Datasets page's hourly counts and every POST /v1/query. At the limit, queries are refused with quota_exceeded (HTTP 402) until ${resets} or an upgrade.`;
    case 'monitors':
      return 'Monitors of the whole organisation (all projects, live and test mode), as they exist now; it does not reset each month, and evaluating them does not count as queries. At the limit, creating a monitor is refused with quota_exceeded (HTTP 402): delete one or upgrade the plan.';
    default:
      return '';
  }
}

/** What to do once a metric is used up. */
function whenReached(metric: string, resets: string): string {
  if (metric === 'storage_bytes') return 'Limit reached: uploads are refused until files are deleted and purged, or the plan is upgraded.';
  if (metric === 'monitors') return 'Limit reached: new monitors are refused until one is deleted, or the plan is upgraded.';
  return `Limit reached: refused until ${resets}, or upgrade the plan.`;
}

export function UsagePage(_props: { route: Route }): JSX.Element {
  const { can, membership, target } = useSession();
  const mayReadBilling = can('billing:read');
  const usageCall = useUsage();
  const billingCall = useBilling(mayReadBilling);
  const datasets = useDatasetCount(mayReadBilling && can('logs:read'));
  const usage = usageCall.value;
  const error = usageCall.error;
  const billing = billingCall.value;
  const billingError = billingCall.error;
  const datasetCount = datasets.value;
  const load = () => Promise.all([usageCall.reload(), billingCall.reload(), datasets.reload()]);

  const resets = usage ? formatUtcDate(usage.period_end) : '';
  const meters: Meter[] = usage?.quotas ?? [];

  return (
    <section class="usage-page">
      <div class="page-head">
        <h1>Usage and plan</h1>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorNote error={error} />
      {!usage && !error && <Loading what="usage" />}
      {usage && (
        <>
          <p data-testid="plan">
            Plan <strong class="plan-name">{usage.plan}</strong> · this period: {formatUtcDate(usage.period_start)} to {formatUtcDate(Date.parse(usage.period_end) - 1)} (UTC). Monthly counts
            start again on {resets}. The counts are the organisation's: all its projects, live and test mode.
          </p>
          <ul class="meters">
            {meters.map((m) => (
              <QuotaMeter key={m.metric} meter={m} resets={resets} />
            ))}
          </ul>
          <p class="muted small">
            A request that would pass a limit is refused whole with the error <code>quota_exceeded</code> (HTTP 402), which names the metric and these numbers; nothing of it is
            stored.
          </p>
        </>
      )}
      <h2>Plan limits</h2>
      {mayReadBilling ? (
        <>
          <ErrorNote error={billingError} />
          {!billing && !billingError && <Loading what="the plan" />}
          {billing && <PlanLimits billing={billing} datasetCount={datasetCount} mode={target.mode} />}
        </>
      ) : (
        <p class="note muted" data-testid="no-billing">
          The plan's other limits (file size, datasets, retention, live tail) are billing details, which your role ({membership.role}) cannot read: an Owner or Admin can.
        </p>
      )}
    </section>
  );
}

function QuotaMeter(props: { meter: Meter; resets: string }): JSX.Element {
  const { metric, used, limit } = props.meter;
  const name = metricNames[metric] ?? metric;
  const share = limit === null ? 0 : limit === 0 ? (used > 0 ? 1 : 0) : used / limit;
  const percent = Math.min(100, share * 100);
  const state = limit === null ? 'unlimited' : share >= 1 ? 'reached' : share >= 0.8 ? 'close' : 'ok';
  const amount = limit === null ? `${formatMetric(metric, used)} · no limit on this plan` : `${formatMetric(metric, used)} of ${formatMetric(metric, limit)}`;
  const percentText = limit === null ? '' : share > 0 && share < 0.01 ? 'under 1%' : `${Math.floor(share * 100)}%`;
  const id = `meter-${metric}`;
  return (
    <li class="meter" data-testid={`quota-${metric}`}>
      <div class="meter-head">
        <h3 id={id}>{name}</h3>
        <span class="meter-amount">
          <span data-testid="amount">{amount}</span>
          {percentText && <span class="muted"> · {percentText}</span>}
        </span>
      </div>
      <div
        class={`bar${state === 'reached' ? ' over' : ''}`}
        role="meter"
        aria-labelledby={id}
        aria-valuemin={0}
        aria-valuemax={limit ?? used}
        aria-valuenow={limit === null ? used : Math.min(used, limit)}
        aria-valuetext={amount}
      >
        <span style={{ width: `${percent}%` }} />
      </div>
      {state === 'reached' && (
        <p class="note error" role="status">
          {whenReached(metric, props.resets)}
        </p>
      )}
      {state === 'close' && <p class="note warn">Close to the limit.</p>}
      <p class="muted small">{explain(metric, props.resets)}</p>
    </li>
  );
}

function PlanLimits(props: { billing: Billing; datasetCount: number | undefined; mode: string }): JSX.Element {
  const l = props.billing.plan_limits;
  const unlimited = (n: number | null, f: (n: number) => string) => (n === null ? 'unlimited' : f(n));
  const rows: Array<[string, string, JSX.Element | string]> = [
    ['Plan', props.billing.plan, ''],
    ['Largest file', formatBytes(l.max_file_bytes), 'per upload: the smaller of this and the content type\'s limit (images and documents 50 MB, video 500 MB)'],
    ['Storage', unlimited(l.storage_bytes, formatBytes), 'media files, all projects of the organisation'],
    [
      'Datasets',
      unlimited(l.datasets, formatCount),
      <>
        active datasets of the whole organisation, archived ones and "default" not counted
        {props.datasetCount !== undefined && <span data-testid="project-datasets">; this project has {formatCount(props.datasetCount)} in {props.mode} mode</span>}. At the cap, creating a
        dataset is refused with quota_exceeded (HTTP 402) and events sent to a new name go to "default" (their intended name kept in payload._dataset).
      </>,
    ],
    ['Retention', `${formatCount(l.retention_days)} days`, 'the most a dataset may keep its events; each dataset sets its own up to this'],
    [
      'Live tail',
      l.live_tail ? 'included' : 'not included',
      l.live_tail ? '' : (
        <>
          opening a tail is refused with tier_upgrade_required (HTTP 402), which names the plan that has it; the explorer's queries still work (<Link href="/">Explorer</Link>)
        </>
      ),
    ],
    ['Events per month', unlimited(l.events_month, formatCount), 'calendar month, UTC'],
    ['Queries per month', unlimited(l.queries_month, formatCount), 'calendar month, UTC'],
    ['Monitors', unlimited(l.monitors, formatCount), 'monitors of the whole organisation, all projects and modes'],
  ];
  return (
    <div class="table-wrap">
      <table class="limits" data-testid="plan-limits">
        <tbody>
          {rows.map(([what, value, note]) => (
            <tr key={what}>
              <th scope="row">{what}</th>
              <td class="value">{value}</td>
              <td class="muted small">{note}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
