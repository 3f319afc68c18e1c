import type { JSX } from 'preact';
import type { Route } from '../router';

export function UsagePage(_props: { route: Route }): JSX.Element {
  return <h1>Usage</h1>;
}
