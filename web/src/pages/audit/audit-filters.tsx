// The Audit page's filters: who (actor id), what (action), about what (target id) and when (from,
// to in the reader's time zone, sent as UTC). Applied together on submit, so typing does not
// fetch a page per key.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { noFilters, type AuditAction, type AuditFilters } from './use-audit';

/** GET /v1/orgs/{orgId}/audit's `action` values (DECISIONS.md §20, §22), grouped by what they change. */
export const auditActions = [
  'token.create',
  'token.revoke',
  'member.invite',
  'member.role_change',
  'member.remove',
  'user.sign_in',
  'user.password_set',
  'org.create',
  'org.plan_change',
  'org.owner_transfer',
  'project.create',
  'dataset.create',
  'dataset.update',
  'dataset.archive',
  'file.delete',
  'file.restore',
  'file.purge',
  'monitor.create',
  'monitor.update',
  'monitor.delete',
  'channel.create',
  'channel.update',
  'channel.delete',
  'sso.configure',
  'sso.sign_in',
  'sso.domain_verify',
] as const satisfies ReadonlyArray<NonNullable<AuditAction>>;

/** The other way round: an action the API gains (api:types) and the list lacks fails `tsc -p web` here, naming it. */
type UnlistedAction = Exclude<NonNullable<AuditAction>, (typeof auditActions)[number]>;
const everyActionListed: [UnlistedAction] extends [never] ? true : UnlistedAction = true;
void everyActionListed;

/** `datetime-local`'s value (local time, no zone) ↔ ISO 8601 UTC. */
const toIso = (local: string): string => (local ? new Date(local).toISOString() : '');
const toLocal = (iso: string): string => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function AuditFiltersForm(props: { value: AuditFilters; onApply: (filters: AuditFilters) => void }): JSX.Element {
  const [draft, setDraft] = useState(props.value);
  // Functional: keys typed faster than a render must not each start from a stale draft.
  const set = (name: keyof AuditFilters, value: string) => setDraft((before) => ({ ...before, [name]: value }));
  const submit = (event: Event) => {
    event.preventDefault();
    props.onApply({ ...draft, actor: draft.actor.trim(), target_id: draft.target_id.trim() });
  };
  return (
    <form class="panel audit-filters" onSubmit={submit} aria-label="Filter the audit log">
      <div class="form-grid">
        <label>
          Action
          <select name="action" value={draft.action} onChange={(e) => set('action', e.currentTarget.value)}>
            <option value="">Any action</option>
            {auditActions.map((a) => (
              <option key={a} value={a}>
                {a}
              </option>
            ))}
          </select>
        </label>
        <label>
          Actor id
          <input name="actor" value={draft.actor} maxLength={128} placeholder="usr_…, tok_… or an operator" onInput={(e) => set('actor', e.currentTarget.value)} />
        </label>
        <label>
          Target id
          <input name="target_id" value={draft.target_id} maxLength={128} placeholder="tok_…, f_…, usr_…" onInput={(e) => set('target_id', e.currentTarget.value)} />
        </label>
        <label>
          From
          <input type="datetime-local" name="from" value={toLocal(draft.from)} onInput={(e) => set('from', toIso(e.currentTarget.value))} />
        </label>
        <label>
          To
          <input type="datetime-local" name="to" value={toLocal(draft.to)} onInput={(e) => set('to', toIso(e.currentTarget.value))} />
        </label>
      </div>
      <div class="row">
        <button type="submit" class="primary">
          Apply filters
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft(noFilters);
            props.onApply(noFilters);
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
