// Members of the chosen organisation (SPEC.md §4.6): list, invite (POST /v1/orgs/{orgId}/members,
// then the one-time set-password link from POST /dashboard/password-links to hand over), change
// role, remove. Owners and Admins manage (members:write); an Admin cannot change Owners
// (DECISIONS.md §17); the owner rules' 409 answers are explained in words (member-rules.ts).
// Requests: use-members.ts (list, roles), use-member-writes.ts (invite, role, remove).
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../../components/notes';
import type { Route } from '../../router';
import { useSession } from '../../session';
import { InviteForm } from './invite-form';
import { LinkPanel } from './link-panel';
import { MemberRow } from './member-row';
import { roleHelp, type IssuedLink } from './member-rules';
import { useMembers, useRoles } from './use-members';
import '../access.css';

export function MembersPage(_props: { route: Route }): JSX.Element {
  const session = useSession();
  const { target, membership } = session;
  const manage = session.can('members:write');
  const [issued, setIssued] = useState<IssuedLink>();
  const [notice, setNotice] = useState('');
  const list = useMembers(target.org_id);
  const { roles, error: rolesError } = useRoles(target.org_id);
  const members = list.items;
  const error = list.error ?? rolesError;

  // An Admin cannot make anyone Owner (nor change an Owner): the choice is not offered.
  const assignable = roles.filter((r) => membership.role === 'Owner' || r.name !== 'Owner');

  return (
    <section class="members-page">
      <h1>Members</h1>
      <p class="muted">
        The people of <strong>{membership.org_name}</strong>. A role applies to every project of the organisation, in live and test mode.
      </p>
      <details class="small">
        <summary>What each role may do</summary>
        <ul>
          {Object.entries(roleHelp).map(([name, help]) => (
            <li key={name}>
              <strong>{name}</strong>: {help}
            </li>
          ))}
        </ul>
      </details>
      {!manage && (
        <p class="note" data-testid="members-read-only">
          Your role ({membership.role}) can see the members. Owners and Admins invite, change roles and remove.
        </p>
      )}
      {issued && <LinkPanel issued={issued} onDone={() => setIssued(undefined)} onIssued={setIssued} />}
      {manage && !issued && (
        <InviteForm
          roles={assignable}
          onInvited={(member, next) => {
            setIssued(next);
            setNotice(`${member.email} is now a member.`);
            list.reload();
          }}
        />
      )}
      <h2>People</h2>
      <p class="note ok small" role="status">
        {notice}
      </p>
      <ErrorNote error={error} />
      {members === undefined ? (
        !error && <Loading what="members" />
      ) : (
        <div class="table-wrap">
          <table data-testid="members-table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col" class="wide">
                  Joined
                </th>
                {manage && <th scope="col">Manage</th>}
              </tr>
            </thead>
            <tbody>
              {members.map((m) => (
                <MemberRow
                  key={m.id}
                  member={m}
                  manage={manage}
                  roles={assignable}
                  onChanged={(message) => {
                    setNotice(message);
                    list.reload();
                  }}
                  onLink={setIssued}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.hasMore && (
        <button type="button" disabled={list.loading} onClick={list.loadMore}>
          Load more
        </button>
      )}
    </section>
  );
}
