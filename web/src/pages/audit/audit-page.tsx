// The organisation's audit log (DECISIONS.md §20, docs/audit.md): who changed what, when and from
// where, newest first, with filters and each entry's details. Owners and Admins hold audit:read;
// other roles are told so instead of a refused request. Requests: use-audit.ts.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import type { Route } from '../../router';
import { useSession } from '../../session';
import { AuditFiltersForm } from './audit-filters';
import { AuditList } from './audit-list';
import { noFilters, useAudit, type AuditFilters } from './use-audit';
import '../access.css';
import './audit.css';

export function AuditPage(_props: { route: Route }): JSX.Element {
  const session = useSession();
  const { target, membership } = session;
  const allowed = session.can('audit:read');
  const [filters, setFilters] = useState<AuditFilters>(noFilters);
  // The form keeps its own draft: remounting it (by key) shows filters set from a row's link.
  const [formKey, setFormKey] = useState(0);
  const list = useAudit(allowed ? target.org_id : '', filters);
  const apply = (next: AuditFilters) => setFilters(next);

  return (
    <section class="audit-page">
      <h1>Audit log</h1>
      <p class="muted">
        Every change to this organisation — tokens, members, sign-ins, plans, datasets, files, monitors and channels — made through the API, this dashboard or{' '}
        <code>opsctl</code>, with who made it and from where. Entries cannot be changed or deleted and are kept 400 days.
      </p>
      {!allowed ? (
        <p class="note" data-testid="audit-forbidden">
          Your role ({membership.role}) cannot read the audit log: that needs the <code>audit:read</code> scope, which Owners and Admins hold.
        </p>
      ) : (
        <>
          <AuditFiltersForm key={formKey} value={filters} onApply={apply} />
          <AuditList
            list={list}
            onFilter={(name, value) => {
              setFilters({ ...filters, [name]: value });
              setFormKey(formKey + 1);
            }}
          />
        </>
      )}
    </section>
  );
}
