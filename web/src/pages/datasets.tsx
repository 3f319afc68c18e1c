import type { JSX } from 'preact';
import type { Route } from '../router';

export function DatasetsPage(_props: { route: Route }): JSX.Element {
  return <h1>Datasets</h1>;
}
