// An API error in words, with a plan limit explained: quota_exceeded names the metric and how
// much of it is used, tier_upgrade_required the plan that allows the feature.
import type { JSX } from 'preact';
import { ApiError, describeError } from '../api/errors';
import { Link } from '../router';
import { formatBytes, formatCount } from './units';

/** What each quota metric counts, as the Usage page and the errors name it. */
export const metricNames: Record<string, string> = {
  storage_bytes: 'Storage',
  events_month: 'Events this month',
  queries_month: 'Queries this month',
  datasets: 'Datasets',
  monitors: 'Monitors',
};

/** A metric's amount in its unit: bytes for storage, counts for the rest. */
export function formatMetric(metric: string, amount: number): string {
  return metric === 'storage_bytes' ? formatBytes(amount) : formatCount(amount);
}

interface QuotaDetail {
  metric: string;
  used: number;
  limit: number | null;
}

function quotaOf(error: ApiError): QuotaDetail | undefined {
  const metric = typeof error.details.metric === 'string' ? error.details.metric : undefined;
  const quotas = Array.isArray(error.details.quotas) ? (error.details.quotas as QuotaDetail[]) : [];
  return quotas.find((q) => q.metric === metric);
}

/** Like ErrorNote, plus the plan limit behind a 402 and a link to the Usage page. */
export function PlanErrorNote(props: { error: unknown; prefix?: string }): JSX.Element | null {
  const { error } = props;
  if (error === undefined || error === null) return null;
  let detail: string | undefined;
  if (error instanceof ApiError && error.code === 'quota_exceeded') {
    const quota = quotaOf(error);
    const name = metricNames[quota?.metric ?? String(error.details.metric)] ?? String(error.details.metric);
    detail = quota && quota.limit !== null ? `${name}: ${formatMetric(quota.metric, quota.used)} of ${formatMetric(quota.metric, quota.limit)} used on your plan.` : `${name}: the plan's limit is reached.`;
  } else if (error instanceof ApiError && error.code === 'tier_upgrade_required' && typeof error.details.required_plan === 'string') {
    detail = `This needs the ${error.details.required_plan} plan or higher.`;
  }
  return (
    <p class="note error" role="alert">
      {props.prefix ? `${props.prefix}: ` : ''}
      {describeError(error)}
      {detail && (
        <>
          {' '}
          {detail} <Link href="/usage">See usage and plan</Link>
        </>
      )}
    </p>
  );
}
