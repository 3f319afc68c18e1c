import type { JSX } from 'preact';
import type { Route } from '../router';

export function ExplorerPage(_props: { route: Route }): JSX.Element {
  return <h1>Explorer</h1>;
}
