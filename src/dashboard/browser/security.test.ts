import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { noBrowser, password, startDashboard, unexpected, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

const minute = 60_000;

describe('dashboard security in Chromium: cookie, CSRF, CSP, short-lived tokens, throttling', needs(noBrowser), () => {
  let d: Dashboard;
  let attacker: http.Server;
  let attackerUrl: string;
  before(async () => {
    d = await startDashboard();
    // Another origin (another port) serving forms that post to the dashboard on load.
    attacker = http.createServer((request, response) => {
      const target = `${d.s.apiUrl}${request.url === '/password' ? '/dashboard/password' : '/dashboard/session/token'}`;
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(`<!doctype html><form id="f" method="POST" action="${target}" enctype="text/plain">
        <input name='{"org_id":"${d.s.tenants.a.orgId}","project_id":"${d.s.tenants.a.projectId}","mode":"live","x":"' value='"}'></form>
        <script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  });
  after(async () => {
    attacker?.close();
    await d?.close();
  });

  test('the session cookie is HttpOnly, SameSite=Strict, scoped to /dashboard, invisible to scripts', async () => {
    await d.member('cookie@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'cookie@example.com');
    const [cookie, ...others] = await context.cookies();
    assert.equal(others.length, 0);
    assert.equal(cookie!.name, 'ops_session');
    assert.equal(cookie!.httpOnly, true);
    assert.equal(cookie!.sameSite, 'Strict');
    assert.equal(cookie!.path, '/dashboard');
    assert.equal(await page.evaluate(() => document.cookie), '');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('CSRF: a cross-origin form POST is refused, though the victim is signed in', async () => {
    await d.member('victim@example.com', 'Owner');
    const { context, page } = await d.context();
    await d.signIn(page, 'victim@example.com');
    const before = await d.s.server.ctx.metadata.db.selectFrom('api_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    for (const path of ['/token', '/password']) {
      const evil = await context.newPage();
      const answer = evil.waitForResponse((r) => r.url().startsWith(d.s.apiUrl) && r.request().method() === 'POST');
      await evil.goto(`${attackerUrl}${path}`);
      const response = await answer;
      assert.equal(response.status(), 403, path);
      assert.equal(((await response.json()) as { error: { code: string } }).error.code, 'forbidden');
      await evil.close();
    }
    const after = await d.s.server.ctx.metadata.db.selectFrom('api_tokens').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(after.n), Number(before.n), 'no token was issued');
    // The victim's own page still works.
    await page.reload();
    await page.getByTestId('sign-out').waitFor();
    await context.close();
  });

  test('CSP: the pages carry it, and an injected inline script does not run', async () => {
    const { context, page } = await d.context();
    const response = await page.goto(`${d.url}/sign-in`);
    const csp = response!.headers()['content-security-policy']!;
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    const outcome = await page.evaluate(
      () =>
        new Promise<{ ran: boolean; violated: string }>((resolve) => {
          const w = window as unknown as { injected?: boolean };
          document.addEventListener('securitypolicyviolation', (e) => resolve({ ran: Boolean(w.injected), violated: e.violatedDirective }));
          const script = document.createElement('script');
          script.textContent = 'window.injected = true';
          document.body.append(script);
          setTimeout(() => resolve({ ran: Boolean(w.injected), violated: '' }), 1000);
        }),
    );
    assert.equal(outcome.ran, false);
    assert.match(outcome.violated, /script-src/);
    await context.close();
  });

  test('the short-lived token: refused by /v1 once its 15 minutes are over; the page gets a new one by itself', async () => {
    await d.member('clock@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'clock@example.com');
    const target = { org_id: d.s.tenants.a.orgId, project_id: d.s.tenants.a.projectId, mode: 'live' };
    const held = await page.evaluate(async (t) => {
      const res = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(t) });
      return ((await res.json()) as { token: string }).token;
    }, target);
    const usage = (token: string) => fetch(`${d.s.baseUrl}/usage`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await usage(held)).status, 200);
    d.s.clock.advance(16 * minute);
    try {
      assert.equal((await usage(held)).status, 401);
      // The page's own token lapsed too: its next /v1 call is refused once, then sent again with a new token.
      const statuses: number[] = [];
      page.on('response', (r) => {
        // The Usage page's own call: an answer to the page signed in before (the explorer's
        // query, sent with the token of before) can still arrive after the listener is added.
        if (new URL(r.url()).pathname === '/v1/usage') statuses.push(r.status());
      });
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage', exact: true }).click();
      await page.waitForFunction(() => document.querySelector('main h1')?.textContent?.includes('Usage'));
      for (let waited = 0; !statuses.includes(200) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      assert.equal(statuses[0], 401, `statuses ${statuses.join(',')}`);
      assert.ok(statuses.includes(200));
      assert.deepEqual(
        unexpected(problems).filter((p) => !/401/.test(p)),
        [],
      );
    } finally {
      d.s.clock.advance(-16 * minute);
    }
    await context.close();
  });

  test('sign-in throttling is explained: after 10 failures, "try again in N minutes", even with the right password', async () => {
    await d.member('guess@example.com', 'Viewer');
    const { context, page } = await d.context();
    await page.goto(`${d.url}/sign-in`);
    await page.getByLabel('E-mail').fill('guess@example.com');
    for (let i = 0; i < 10; i++) {
      await page.getByLabel('Password').fill(`wrong guess number ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').filter({ hasText: 'wrong e-mail or password' }).waitFor();
    }
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: /Too many sign-in attempts\. Try again in \d+ minute/ }).waitFor();
    await context.close();
  });
});
