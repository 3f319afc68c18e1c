// What "Test the configuration" found: the provider's endpoints and keys, or what failed.
import type { JSX } from 'preact';
import type { SsoTestReport } from './use-sso-writes';

export function TestReport(props: { report: SsoTestReport }): JSX.Element {
  const { report } = props;
  return (
    <div class={`note ${report.ok ? 'ok' : 'error'}`} role="status" data-testid="sso-test-report">
      <p>
        <strong>{report.ok ? 'The provider answered as expected.' : 'The provider cannot be used as configured.'}</strong>
      </p>
      {report.problems.length > 0 && (
        <ul>
          {report.problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      )}
      {report.token_endpoint && (
        <dl class="sso-found">
          <dt>Authorization endpoint</dt>
          <dd>{report.authorization_endpoint}</dd>
          <dt>Token endpoint</dt>
          <dd>{report.token_endpoint}</dd>
          <dt>Keys ({report.jwks_uri})</dt>
          <dd>
            {report.keys.length} key{report.keys.length === 1 ? '' : 's'}
            {report.keys.length > 0 && `: ${report.keys.map((k) => `${k.kid || '(no kid)'} ${k.alg || k.kty}`).join(', ')}`}
          </dd>
        </dl>
      )}
    </div>
  );
}
