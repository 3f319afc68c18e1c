// Datasets: the project's datasets with their last 24 hours (GET /v1/datasets and one
// SOQL `stats count() by dataset, bin(1h)` query), create / edit / archive for roles with
// logs:write, and each dataset's schema (GET /v1/datasets/{name}/schema).
// Requests: use-datasets.ts (list, summary, the plan's retention), use-hourly-activity.ts (the
// sparklines' counts), use-dataset-writes.ts (create, edit, archive), use-dataset-schema.ts.
import type { JSX } from 'preact';
import type { Route } from '../../router';
import { DatasetList } from './dataset-list';
import { DatasetSchema } from './dataset-schema';
import './datasets.css';

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
