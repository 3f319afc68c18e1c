import type { JSX } from 'preact';
import type { Route } from '../router';

export function MembersPage(_props: { route: Route }): JSX.Element {
  return <h1>Members</h1>;
}
