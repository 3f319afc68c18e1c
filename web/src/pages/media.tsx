import type { JSX } from 'preact';
import type { Route } from '../router';

export function MediaPage(_props: { route: Route }): JSX.Element {
  return <h1>Media</h1>;
}
