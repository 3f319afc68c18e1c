// The one-time set-password link to hand over after an invite or a reset, with Copy, until
// dismissed; or, for someone who has a password, the offer of a reset link.
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { CopyField, When } from '../../components/copy-field';
import { ErrorNote } from '../../components/notes';
import { explainMemberError, type IssuedLink } from './member-rules';
import { usePasswordLink } from './use-member-writes';

/** The one-time link to hand over, or why there is none (the user has a password already). */
export function LinkPanel(props: { issued: IssuedLink; onDone: () => void; onIssued: (issued: IssuedLink) => void }): JSX.Element {
  const { member, link, invited } = props.issued;
  const makeLink = usePasswordLink();
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
      props.onIssued({ member, link: await makeLink(member.id, true), invited: false });
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
