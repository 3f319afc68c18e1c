// Invite a member: POST /v1/orgs/{orgId}/members adds the user (created when new), then POST
// /dashboard/password-links gives the one-time link to hand over (no e-mail is sent).
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { describeError } from '../../api/errors';
import type { PasswordLink } from '../../api/password-links';
import { ErrorNote } from '../../components/notes';
import { explainMemberError, type IssuedLink, type Member, type Role } from './member-rules';
import { useInviteMember, usePasswordLink } from './use-member-writes';

export function InviteForm(props: { roles: Role[]; onInvited: (member: Member, issued?: IssuedLink) => void }): JSX.Element {
  const invite = useInviteMember();
  const makeLink = usePasswordLink();
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [roleId, setRoleId] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  // Developer by default: the least surprising role for someone new.
  const chosen = roleId || props.roles.find((r) => r.name === 'Developer')?.id || props.roles[0]?.id || '';
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const member = await invite({ email: email.trim(), roleId: chosen, ...(name.trim() ? { name: name.trim() } : {}) });
      let link: PasswordLink;
      try {
        link = await makeLink(member.id);
      } catch (e) {
        // The member exists; only the link failed: say so, the row's "Password link" retries.
        setError(new Error(`${member.email} was added, but no password link could be made: ${describeError(explainMemberError(e))} Use “Password link” in their row.`));
        props.onInvited(member);
        return;
      }
      setEmail('');
      setName('');
      props.onInvited(member, { member, link, invited: true });
    } catch (e) {
      setError(explainMemberError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a member</h2>
      <p class="small muted">No e-mail is sent: you get a one-time link to hand over, with which they set their password.</p>
      <div class="form-grid">
        <label>
          E-mail
          <input type="email" name="email" required maxLength={320} autoComplete="off" value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        </label>
        <label>
          Name (optional)
          <input name="name" maxLength={200} autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Role
          <select name="role" value={chosen} onChange={(e) => setRoleId(e.currentTarget.value)}>
            {props.roles.map((r) => (
              <option key={r.id} value={r.id}>
                {r.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={error} />
      <div class="row">
        <button type="submit" class="primary" disabled={busy || !chosen}>
          Invite
        </button>
      </div>
    </form>
  );
}
