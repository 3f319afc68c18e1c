// One member's row: name, role, joining date and, for Owners and Admins, Change role, Password
// link and Remove, each behind a dialog that shows the refusal explained.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm';
import { When } from '../../components/copy-field';
import { useSession } from '../../session';
import { explainMemberError, roleHelp, type IssuedLink, type Member, type Role } from './member-rules';
import { useChangeRole, usePasswordLink, useRemoveMember } from './use-member-writes';

export function MemberRow(props: { member: Member; manage: boolean; roles: Role[]; onChanged: (message: string) => void; onLink: (issued: IssuedLink) => void }): JSX.Element {
  const { member: m } = props;
  const { info, membership, target, switchTo } = useSession();
  const [role, setRole] = useState(m.role.id);
  const you = m.id === info.user.id;
  // "Admin cannot change Owners": no controls an Admin could not use.
  const ownerOnly = m.role.name === 'Owner' && membership.role !== 'Owner';
  const who = m.name && m.name !== m.email ? `${m.name} (${m.email})` : m.email;
  const changeRoleOf = useChangeRole();
  const removeMember = useRemoveMember();
  const makeLink = usePasswordLink();
  const help = roleHelp[props.roles.find((r) => r.id === role)?.name ?? ''];

  const afterOwnChange = async () => {
    // Your own role or membership changed: the session's tokens were revoked; start again.
    await switchTo(target).catch(() => location.reload());
  };
  const changeRole = async () => {
    const next = props.roles.find((r) => r.id === role);
    if (!next || next.id === m.role.id) throw new Error('choose a role other than the current one');
    await changeRoleOf(m.id, next.id);
    props.onChanged(`${m.email} is now ${next.name}.`);
    if (you) await afterOwnChange();
  };
  const remove = async () => {
    await removeMember(m.id);
    props.onChanged(`${m.email} was removed from ${membership.org_name}.`);
    if (you) location.assign('/dashboard/');
  };
  const reset = async () => {
    try {
      const link = await makeLink(m.id, true);
      props.onLink({ member: m, link, invited: false });
    } catch (e) {
      throw explainMemberError(e);
    }
  };

  return (
    <tr data-member-id={m.id}>
      <td>
        <strong>{m.name || m.email}</strong>
        {you && <span class="muted"> (you)</span>}
        <div class="muted small email">{m.email}</div>
      </td>
      <td>{m.role.name}</td>
      <td class="wide">
        <When iso={m.joinedAt} />
      </td>
      {props.manage && (
        <td>
          {ownerOnly ? (
            <span class="muted small">Only an Owner can change an Owner.</span>
          ) : (
            <div class="row" role="group" aria-label={`Manage ${m.email}`}>
              <ConfirmButton label="Change role" title={`Change the role of ${who}`} confirmLabel="Save role" testId={`role-${m.id}`} action={changeRole}>
                <label>
                  New role
                  <select value={role} onChange={(e) => setRole(e.currentTarget.value)}>
                    {props.roles.map((r) => (
                      <option key={r.id} value={r.id}>
                        {r.name}
                        {r.id === m.role.id ? ' (current)' : ''}
                      </option>
                    ))}
                  </select>
                </label>
                <p class="small muted">
                  {help ? `${help[0]!.toUpperCase()}${help.slice(1)}. ` : ''}It applies at once: their open dashboard pages continue with the new role's rights.
                  {you ? ' This is your own role.' : ''}
                </p>
              </ConfirmButton>
              <ConfirmButton label="Password link" title={`A new password link for ${who}`} confirmLabel="Make link" testId={`link-${m.id}`} action={reset}>
                <p>
                  Makes a one-time link (valid 24 hours) with which whoever holds it sets this person's password. Their current password keeps working until then; earlier
                  links stop working. Setting the password signs them out everywhere.
                </p>
              </ConfirmButton>
              <ConfirmButton label="Remove" title={`Remove ${who}?`} confirmLabel="Remove member" danger testId={`remove-${m.id}`} action={remove}>
                <p>
                  {you ? 'You lose' : `${m.email} loses`} access to {membership.org_name} at once: {you ? 'your' : 'their'} dashboard sessions for it end. API tokens made for
                  its projects keep working (they belong to the project): revoke them on the Tokens page if needed.
                </p>
              </ConfirmButton>
            </div>
          )}
        </td>
      )}
    </tr>
  );
}
