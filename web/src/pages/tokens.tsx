import type { JSX } from 'preact';
import type { Route } from '../router';

export function TokensPage(_props: { route: Route }): JSX.Element {
  return <h1>Tokens</h1>;
}
