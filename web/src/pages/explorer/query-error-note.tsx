// An error of the explorer's query in words: a parse error with where it is in the reader's
// text, a plan quota explained with a link to Usage, anything else as the API said it.
import type { JSX } from 'preact';
import { ApiError, describeError } from '../../api/errors';
import { Link } from '../../router';

/** An error of the query in words: a parse error with where it is, a plan quota explained. */
export function QueryErrorNote(props: { error: unknown; position: number | null; q: string }): JSX.Element | null {
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
