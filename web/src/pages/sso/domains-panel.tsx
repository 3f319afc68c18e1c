// The organisation's e-mail domains and their verification (POST /v1/orgs/{orgId}/sso/domains/
// {domain}/verify): a domain routes "Sign in with SSO" only once its DNS TXT record was found, so
// each unverified one shows the record to publish and a Verify button.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { CopyField, When } from '../../components/copy-field';
import { ErrorNote } from '../../components/notes';
import type { SsoDomain } from './use-sso-config';
import { useVerifySsoDomain } from './use-sso-writes';

export function DomainsPanel(props: { domains: SsoDomain[]; onVerified: (domain: SsoDomain) => void }): JSX.Element {
  const unverified = props.domains.filter((d) => !d.verified).length;
  return (
    <div class="panel" aria-labelledby="sso-domains-title">
      <h2 id="sso-domains-title">Domain verification</h2>
      <p class="muted small">
        {unverified === 0
          ? 'Every domain is verified: its addresses sign in through your provider.'
          : 'A domain signs members in only once verified: add the TXT record shown at the domain’s DNS provider, then press Verify (a new record can take a few minutes to be served).'}
      </p>
      <ul class="sso-domains">
        {props.domains.map((d) => (
          <DomainItem key={d.domain} domain={d} onVerified={props.onVerified} />
        ))}
      </ul>
    </div>
  );
}

function DomainItem(props: { domain: SsoDomain; onVerified: (domain: SsoDomain) => void }): JSX.Element {
  const { domain } = props;
  const verify = useVerifySsoDomain();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = async () => {
    setBusy(true);
    setError(undefined);
    try {
      props.onVerified(await verify(domain.domain));
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <li data-testid={`sso-domain-${domain.domain}`}>
      <p class="sso-domain-head">
        <strong>{domain.domain}</strong>{' '}
        {domain.verified ? (
          <span class="sso-state sso-state-ok">
            Verified <When iso={domain.verified_at} />
          </span>
        ) : (
          <span class="sso-state sso-state-pending">Not verified</span>
        )}
      </p>
      {domain.dns_record && (
        <>
          <CopyField label={`TXT record name for ${domain.domain}`} value={domain.dns_record.name} />
          <CopyField label={`TXT record value for ${domain.domain}`} value={domain.dns_record.value} />
          <div class="row">
            <button type="button" class="primary" disabled={busy} onClick={() => void run()}>
              Verify
            </button>
          </div>
          <ErrorNote error={error} />
        </>
      )}
    </li>
  );
}
