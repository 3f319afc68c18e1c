// Single sign-on for Owners (DECISIONS.md §22, docs/sso.md): the organisation's OpenID Connect
// provider, the callback URL to register there, its e-mail domains and their verification,
// "Test the configuration", and turning it off.
// Requests: use-sso-config.ts (read), use-sso-writes.ts (save, verify, test, remove).
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../../components/notes';
import { CopyField } from '../../components/copy-field';
import type { Route } from '../../router';
import { useSession } from '../../session';
import { useRoles } from '../members/use-members';
import { DomainsPanel } from './domains-panel';
import { SsoForm } from './sso-form';
import { TestReport } from './test-report';
import { useSsoConfig } from './use-sso-config';
import { useRemoveSso, useTestSso, type SsoTestReport } from './use-sso-writes';
import './sso.css';

export function SsoPage(_props: { route: Route }): JSX.Element {
  const { target, membership } = useSession();
  const { config, error, reload } = useSsoConfig(target.org_id);
  const { roles } = useRoles(target.org_id);
  const runTest = useTestSso();
  const remove = useRemoveSso();
  const [report, setReport] = useState<SsoTestReport>();
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>();
  const [notice, setNotice] = useState('');

  if (membership.role !== 'Owner') {
    return (
      <section class="sso-page">
        <h1>Single sign-on</h1>
        <p class="note">Only an Owner of {membership.org_name} can configure single sign-on.</p>
      </section>
    );
  }
  const act = async (action: () => Promise<void>) => {
    setBusy(true);
    setActionError(undefined);
    try {
      await action();
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="sso-page">
      <h1>Single sign-on</h1>
      <p class="muted">
        Members of <strong>{membership.org_name}</strong> whose e-mail is in one of your domains sign in through your identity provider (OpenID Connect: Google, Okta, Keycloak…). New
        members are created on their first sign-in.
      </p>
      <ErrorNote error={error} />
      {config === undefined && !error && <Loading what="the configuration" />}
      {config && <CopyField label="Callback URL to register at the provider" value={config.callback_url} testId="sso-callback-url" />}
      <p class="note ok small" role="status">
        {notice}
      </p>
      {config && (
        <DomainsPanel
          domains={config.email_domains}
          onVerified={(d) => {
            setNotice(`Verified: ${d.domain} signs in through your provider.`);
            reload();
          }}
        />
      )}
      {config !== undefined && (
        <SsoForm
          key={config?.updated_at ?? 'new'}
          config={config}
          roles={roles.map((r) => r.name).filter((r) => r !== 'Owner')}
          onSaved={(saved) => {
            setNotice(
              saved.email_domains.every((d) => d.verified)
                ? 'Saved: the provider answered and the configuration is in use.'
                : 'Saved: the provider answered. Verify each e-mail domain below before its members can sign in with SSO.',
            );
            setReport(undefined);
            reload();
          }}
        />
      )}
      {config && (
        <div class="panel">
          <h2>Check and turn off</h2>
          <div class="row">
            <button type="button" disabled={busy} onClick={() => void act(async () => setReport(await runTest()))}>
              Test the configuration
            </button>
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() =>
                void act(async () => {
                  await remove();
                  setReport(undefined);
                  setNotice('Single sign-on is off: members sign in with their passwords.');
                  reload();
                })
              }
            >
              Turn off single sign-on
            </button>
          </div>
          <ErrorNote error={actionError} />
          {report && <TestReport report={report} />}
        </div>
      )}
    </section>
  );
}
