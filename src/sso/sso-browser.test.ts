// Single sign-on in Chromium against oidc-provider (the certified OpenID Provider) on loopback:
// the e-mail typed on the sign-in page, the provider's own login and consent pages, and back
// signed in to the dashboard; a refusal shown on the sign-in page; the Owners' SSO page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { noBrowser, password, startDashboard, titled, unexpected, type Dashboard } from '../dashboard/browser/test-browser.js';
import { dashboardService } from '../dashboard/capability.js';
import { startTestProvider, type TestProvider } from './test-provider.js';
import { needs } from '../test-support/ci.js';

describe('single sign-on in Chromium with oidc-provider', needs(noBrowser), () => {
  let d: Dashboard;
  let op: TestProvider;
  before(async () => {
    // oidc-provider is on loopback: private addresses are allowed.
    d = await startDashboard({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' } });
    op = await startTestProvider(`${d.s.apiUrl}/dashboard/sso/callback`);
    const put = await d.s.request('PUT', `/orgs/${d.s.tenants.a.orgId}/sso`, {
      json: { issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, email_domains: ['studio.example'], default_role: 'Developer' },
    });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => {
    await d?.close();
    await op?.close();
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
