// Members of the chosen organisation (SPEC.md §4.6): list, invite (POST /v1/orgs/{orgId}/members,
// then the one-time set-password link from POST /dashboard/password-links to hand over), change
// role, remove. Owners and Admins manage (members:write); an Admin cannot change Owners
// (DECISIONS.md §17); the owner rules' 409 answers are explained in words.
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import type { components } from '../../api/schema';
import { ApiError, describeError } from '../../api/errors';
import { passwordLink, type PasswordLink } from '../../api/password-links';
import { ErrorNote, Loading } from '../../components/notes';
import { ConfirmButton } from '../../components/confirm';
import { CopyField, When } from '../../components/copy-field';
import type { Route } from '../../router';
import { useSession } from '../../session';
import '../access.css';

type Member = components['schemas']['Member'];
type Role = components['schemas']['Role'];

/** A link made for a member, shown until dismissed. */
interface IssuedLink {
  member: Pick<Member, 'id' | 'email' | 'name'>;
  link: PasswordLink;
  /** Why it was made: a new member, or a reset for one who has a password. */
  invited: boolean;
}

/** What each system role may do in the dashboard (docs/dashboard.md's scopes by role). */
const roleHelp: Record<string, string> = {
  Owner: 'everything, including changing Owners',
  Admin: 'everything except changing Owners',
  Developer: 'media, events, queries, live tail, their own tokens; reads members and usage',
  Viewer: 'reads media, events, members and usage',
};

/** The owner rules' and role rules' refusals, in words beside the API's message. */
export function explainMemberError(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  if (error.status === 409 && /owner/i.test(error.message)) {
    return new ApiError(
      error.status,
      error.code,
      `Refused: ${error.message}. An organisation always keeps its primary owner and at least one Owner, so neither can be demoted or removed. ` +
        'Make another member Owner first (Change role → Owner); moving the primary ownership is done by an operator with opsctl owner transfer --org ORG_ID --to USER_ID.',
      error.details,
    );
  }
  if (error.status === 409) return new ApiError(error.status, error.code, `Refused: ${error.message}.`, error.details);
  if (error.status === 403) return new ApiError(error.status, error.code, `Not allowed: ${error.message}.`, error.details);
  if (error.status === 404) return new ApiError(error.status, error.code, `${error.message}: someone may have removed this member meanwhile; the list is reloaded.`, error.details);
  return error;
}

export function MembersPage(_props: { route: Route }): JSX.Element {
  const session = useSession();
  const { target, membership } = session;
  const manage = session.can('members:write');
  const [members, setMembers] = useState<Member[]>();
  const [cursor, setCursor] = useState('');
  const [roles, setRoles] = useState<Role[]>([]);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [issued, setIssued] = useState<IssuedLink>();
  const [notice, setNotice] = useState('');
  const orgId = target.org_id;

  const load = useCallback(
    async (after?: string) => {
      setBusy(true);
      setError(undefined);
      try {
        const page = await data(api.GET('/v1/orgs/{orgId}/members', { params: { path: { orgId }, query: after ? { cursor: after } : {} } }));
        setMembers((before) => (after ? [...(before ?? []), ...page.members] : page.members));
        setCursor(page.nextCursor);
      } catch (e) {
        setError(e);
      } finally {
        setBusy(false);
      }
    },
    [orgId],
  );
  useEffect(() => {
    void load();
    void data(api.GET('/v1/orgs/{orgId}/roles', { params: { path: { orgId } } }))
      .then((r) => setRoles(r.roles))
      .catch(setError);
  }, [load, orgId]);

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
            void load();
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
                    void load();
                  }}
                  onLink={setIssued}
                />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && (
        <button type="button" disabled={busy} onClick={() => void load(cursor)}>
          Load more
        </button>
      )}
    </section>
  );
}

function MemberRow(props: { member: Member; manage: boolean; roles: Role[]; onChanged: (message: string) => void; onLink: (issued: IssuedLink) => void }): JSX.Element {
  const { member: m } = props;
  const { info, membership, target, switchTo } = useSession();
  const [role, setRole] = useState(m.role.id);
  const you = m.id === info.user.id;
  // "Admin cannot change Owners": no controls an Admin could not use.
  const ownerOnly = m.role.name === 'Owner' && membership.role !== 'Owner';
  const who = m.name && m.name !== m.email ? `${m.name} (${m.email})` : m.email;
  const help = roleHelp[props.roles.find((r) => r.id === role)?.name ?? ''];

  const afterOwnChange = async () => {
    // Your own role or membership changed: the session's tokens were revoked; start again.
    await switchTo(target).catch(() => location.reload());
  };
  const changeRole = async () => {
    const next = props.roles.find((r) => r.id === role);
    if (!next || next.id === m.role.id) throw new Error('choose a role other than the current one');
    try {
      await data(api.PATCH('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.org_id, userId: m.id } }, body: { roleId: next.id } }));
    } catch (e) {
      throw explainMemberError(e);
    }
    props.onChanged(`${m.email} is now ${next.name}.`);
    if (you) await afterOwnChange();
  };
  const remove = async () => {
    try {
      await data(api.DELETE('/v1/orgs/{orgId}/members/{userId}', { params: { path: { orgId: target.org_id, userId: m.id } } }));
    } catch (e) {
      throw explainMemberError(e);
    }
    props.onChanged(`${m.email} was removed from ${membership.org_name}.`);
    if (you) location.assign('/dashboard/');
  };
  const reset = async () => {
    try {
      const link = await passwordLink({ org_id: target.org_id, user_id: m.id, reset: true });
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

function InviteForm(props: { roles: Role[]; onInvited: (member: Member, issued?: IssuedLink) => void }): JSX.Element {
  const { target } = useSession();
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
      const member = await data(
        api.POST('/v1/orgs/{orgId}/members', { params: { path: { orgId: target.org_id } }, body: { email: email.trim(), roleId: chosen, ...(name.trim() ? { name: name.trim() } : {}) } }),
      );
      let link: PasswordLink;
      try {
        link = await passwordLink({ org_id: target.org_id, user_id: member.id });
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

/** The one-time link to hand over, or why there is none (the user has a password already). */
function LinkPanel(props: { issued: IssuedLink; onDone: () => void; onIssued: (issued: IssuedLink) => void }): JSX.Element {
  const { member, link, invited } = props.issued;
  const { target } = useSession();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  // It may appear far above a row's button: bring it into view and give it the focus.
  useEffect(() => {
    heading.current?.focus();
    heading.current?.scrollIntoView({ block: 'nearest' });
  }, [link]);
  const resetInstead = async () => {
    setBusy(true);
    setError(undefined);
    try {
      props.onIssued({ member, link: await passwordLink({ org_id: target.org_id, user_id: member.id, reset: true }), invited: false });
    } catch (e) {
      setError(explainMemberError(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="panel secret" role="region" aria-label="Password link" data-testid="password-link">
      {link.set_password_url ? (
        <>
          <h2 ref={heading} tabIndex={-1}>
            {invited ? `${member.email} is invited` : `New password link for ${member.email}`}
          </h2>
          <p class="note warn">
            <strong>Hand this link to {member.email} yourself, privately</strong> (it is not e-mailed). It works once, until <When iso={link.set_password_expires_at} />; whoever
            opens it sets the password. It is not shown again: make a new one from their row if it gets lost.
          </p>
          <CopyField label="One-time set-password link" value={link.set_password_url} testId="password-link-url" />
        </>
      ) : (
        <>
          <h2 ref={heading} tabIndex={-1}>
            {member.email} is a member
          </h2>
          <p>They already have a password and sign in with it; {invited ? 'the organisation now appears in their switcher.' : 'no link was made.'}</p>
          <p class="small muted">If they have lost it, a reset link lets them set a new one (their current password works until then).</p>
          <ErrorNote error={error} />
          <button type="button" disabled={busy} onClick={() => void resetInstead()}>
            Make a password reset link
          </button>
        </>
      )}
      <div class="row end">
        <button type="button" class="primary" onClick={props.onDone}>
          Done
        </button>
      </div>
    </div>
  );
}
