// Single sign-on in Chromium against oidc-provider (the certified OpenID Provider) on loopback:
// the e-mail typed on the sign-in page, the provider's own login and consent pages, and back
// signed in to the dashboard; a refusal shown on the sign-in page; the Owners' SSO page with its
// domains verified against a loopback DNS server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { noBrowser, password, startDashboard, titled, unexpected, type Dashboard } from '../test-support/dashboard/test-browser.js';
import { dashboardService } from '../dashboard/capability.js';
import { startTestProvider, type TestProvider } from '../test-support/sso/test-provider.js';
import { needs } from '../test-support/ci.js';
import { publishAndVerify, startTestDns, type TestDns } from '../test-support/sso/test-dns.js';

describe('single sign-on in Chromium with oidc-provider', needs(noBrowser), () => {
  let d: Dashboard;
  let op: TestProvider;
  let dns: TestDns;
  before(async () => {
    dns = await startTestDns();
    // oidc-provider is on loopback: private addresses are allowed.
    d = await startDashboard({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_DNS_SERVERS: dns.server } });
    op = await startTestProvider(`${d.s.apiUrl}/dashboard/sso/callback`);
    const put = await d.s.request('PUT', `/orgs/${d.s.tenants.a.orgId}/sso`, {
      json: { issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, email_domains: ['studio.example'], default_role: 'Developer' },
    });
    assert.equal(put.status, 200, put.text);
    const verified = await publishAndVerify(d.s, dns, 'studio.example');
    assert.equal(verified.status, 200, verified.text);
  });
  after(async () => {
    await d?.close();
    await op?.close();
    await dns?.close();
  });

  /** A fresh browser whose console errors on the dashboard's origin are collected (the provider's dev pages are not ours). */
  async function browserAt(path: string): Promise<{ page: Page; ours: string[]; close: () => Promise<void> }> {
    const context = await d.browser.newContext();
    // The provider's development pages import a web font; nothing leaves the machine.
    await context.route(/^https?:\/\/(?!127\.0\.0\.1)/, (route) => route.abort());
    const page = await context.newPage();
    const ours: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && page.url().startsWith(d.s.apiUrl)) ours.push(m.text());
    });
    page.on('pageerror', (e) => ours.push(`page error: ${e.message}`));
    await page.goto(`${d.url}${path}`);
    return { page, ours, close: () => context.close() };
  }

  /** "Sign in with SSO", the e-mail typed key by key, then the provider's login (any password) and consent. */
  async function ssoSignIn(page: Page, email: string): Promise<void> {
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.getByLabel('E-mail').pressSequentially(email);
    await page.getByRole('button', { name: 'Continue with SSO' }).click();
    await page.waitForURL((url) => url.href.startsWith(op.issuer));
    // The provider fills the login in from our login_hint; what it shows is what we sent.
    assert.equal(await page.locator('input[name=login]').inputValue(), email);
    await page.locator('input[name=password]').pressSequentially('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  test('e-mail → the provider\'s login → back signed in to the dashboard as a new Developer', async () => {
    const { page, ours, close } = await browserAt('/sign-in');
    try {
      await ssoSignIn(page, 'ada@studio.example');
      await page.getByTestId('sign-out').waitFor();
      await titled(page, 'Explorer · opsplatform');
      assert.match(await page.locator('.user').innerText(), /ada · Developer/);
      assert.ok(!(await page.getByRole('link', { name: 'SSO' }).isVisible()), 'the SSO page is for Owners');
      assert.deepEqual(unexpected(ours), []);
    } finally {
      await close();
    }
  });

  test('an e-mail the provider has not verified: back on the sign-in page with the reason', async () => {
    const { page, ours, close } = await browserAt('/sign-in');
    try {
      await ssoSignIn(page, 'unverified@studio.example');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /single sign-on refused: the provider has not verified the e-mail address unverified@studio\.example \(/);
      assert.equal(new URL(page.url()).hash, '', 'the reason is taken out of the address bar');
      assert.deepEqual(unexpected(ours), []);
    } finally {
      await close();
    }
  });

  test("an Owner's SSO page: the callback URL, the configuration, and the test of it", async () => {
    await d.member('boss@example.com', 'Owner');
    const { page, ours, close } = await browserAt('/sso');
    try {
      await d.signIn(page, 'boss@example.com', '/sso');
      await titled(page, 'SSO · opsplatform');
      assert.match(await page.getByTestId('sso-domain-studio.example').innerText(), /studio\.example\s+Verified/);
      assert.equal(await page.getByLabel('Callback URL to register at the provider').inputValue(), `${d.s.apiUrl}/dashboard/sso/callback`);
      assert.equal(await page.getByLabel('Issuer').inputValue(), op.issuer);
      assert.equal(await page.getByLabel('Client secret').inputValue(), '', 'the secret is never sent to the page');
      await page.getByRole('button', { name: 'Test the configuration' }).click();
      const report = page.getByTestId('sso-test-report');
      await report.waitFor();
      const text = await report.innerText();
      assert.match(text, /The provider answered as expected\./);
      assert.match(text, new RegExp(`Token endpoint\\s+${op.issuer.replace(/\./g, '\\.')}/token`));
      assert.match(text, /[1-9]\d* keys?/);
      assert.deepEqual(unexpected(ours), []);
    } finally {
      await close();
    }
  });

  test("an Owner's SSO page: a domain added shows the TXT record to publish; Verify says what is missing, then verifies it once published", async () => {
    await d.member('chief@example.com', 'Owner');
    const { page, ours, close } = await browserAt('/sso');
    try {
      await d.signIn(page, 'chief@example.com', '/sso');
      const domains = page.getByLabel('E-mail domains');
      await domains.click();
      await domains.press('End');
      await domains.pressSequentially(', games.example');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Verify each e-mail domain' }).waitFor();
      const games = page.getByTestId('sso-domain-games.example');
      await games.getByText('Not verified').waitFor();
      assert.equal(await page.getByLabel('TXT record name for games.example').inputValue(), '_opsplatform.games.example');
      const value = await page.getByLabel('TXT record value for games.example').inputValue();
      assert.match(value, /^opsplatform-domain-verification=[0-9a-f]{32}$/);
      assert.ok(!(await page.getByLabel('TXT record name for studio.example').isVisible()), 'a verified domain shows no record');

      await games.getByRole('button', { name: 'Verify' }).click();
      const alert = games.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /no TXT record was found at _opsplatform\.games\.example/);

      dns.txt.set('_opsplatform.games.example', [[value]]);
      await games.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('status').filter({ hasText: 'Verified: games.example signs in through your provider.' }).waitFor();
      await games.getByText('Not verified').waitFor({ state: 'detached' });
      assert.match(await games.innerText(), /^games\.example\s+Verified\s/);
      assert.ok(!(await page.getByLabel('TXT record value for games.example').isVisible()));
      assert.deepEqual(unexpected(ours), []);
    } finally {
      await close();
    }
    const sso = await d.s.request('GET', `/orgs/${d.s.tenants.a.orgId}/sso`);
    assert.deepEqual(sso.body.email_domains.map((x: { domain: string; verified: boolean }) => [x.domain, x.verified]), [['games.example', true], ['studio.example', true]]);
  });

  test('enforce: a member\'s password sign-in says to use SSO and offers it; the primary owner still signs in with a password', async () => {
    await d.member('pat@studio.example', 'Viewer');
    const put = await d.s.request('PUT', `/orgs/${d.s.tenants.a.orgId}/sso`, {
      json: { issuer: op.issuer, client_id: op.clientId, email_domains: ['studio.example'], default_role: 'Developer', enforce: true },
    });
    assert.equal(put.status, 200, put.text);
    const { page, ours, close } = await browserAt('/sign-in');
    try {
      await page.getByLabel('E-mail').pressSequentially('pat@studio.example');
      await page.getByLabel('Password').pressSequentially(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.innerText(), /"Org A" requires single sign-on: use "Sign in with SSO"/);
      assert.ok(await page.getByRole('button', { name: 'Continue with SSO' }).isVisible(), 'the SSO form is offered, the e-mail kept');
      assert.equal(await page.getByLabel('E-mail').inputValue(), 'pat@studio.example');
      assert.deepEqual(unexpected(ours), []);
    } finally {
      await close();
    }
    const { link_token } = await dashboardService(d.s.server.ctx).issuePasswordLink(d.s.tenants.a.userId);
    assert.equal((await fetch(`${d.s.apiUrl}/dashboard/password`, { method: 'POST', headers: { 'content-type': 'application/json', origin: d.s.apiUrl }, body: JSON.stringify({ link_token, password }) })).status, 200);
    const owner = await browserAt('/sign-in');
    try {
      await d.signIn(owner.page, 'owner-a@example.com');
      assert.deepEqual(unexpected(owner.ours), []);
    } finally {
      await owner.close();
    }
  });
});
