// The Alerts pages (DECISIONS.md §18): /alerts, /alerts/new(?q=…), /alerts/{id}, /alerts/{id}/edit.
import type { JSX } from 'preact';
import type { Route } from '../../router';
import { AlertsPage } from './alerts-page';
import { EditMonitorPage, MonitorForm } from './monitor-form';
import { MonitorPage } from './monitor-page';
import './alerts.css';

export function AlertsRoutes(props: { route: Route }): JSX.Element {
  const { path, query } = props.route;
  const rest = path.slice('/alerts'.length).split('/').filter(Boolean).map(decodeURIComponent);
  if (rest[0] === 'new') return <MonitorForm key={`new:${query.get('q') ?? ''}`} initialQ={query.get('q') ?? ''} />;
  if (rest[0] && rest[1] === 'edit') return <EditMonitorPage key={`edit:${rest[0]}`} id={rest[0]} />;
  if (rest[0]) return <MonitorPage key={rest[0]} id={rest[0]} />;
  return <AlertsPage />;
}
