import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertNoPageOverflow, noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

/** A /v1 call made in the page with the signed-in session's own short-lived token (what the app holds). */
async function withSessionToken(page: Page, target: { org_id: string; project_id: string }, method: string, path: string, body?: unknown): Promise<number> {
  return page.evaluate(
    async ({ target, method, path, body }) => {
      const exchanged = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...target, mode: 'live' }) });
      const { token } = (await exchanged.json()) as { token: string };
      const res = await fetch(path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.status;
    },
    { target, method, path, body },
  );
}

describe('dashboard Tokens page in Chromium', needs(noBrowser), () => {
  let d: Dashboard;
  let target: { org_id: string; project_id: string };
  before(async () => {
    d = await startDashboard();
    target = { org_id: d.s.tenants.a.orgId, project_id: d.s.tenants.a.projectId };
  });
  after(() => d?.close());

  test('create with scopes → the secret shown once, copied → it works on /v1 → listed with its scopes → revoked after confirming → 401', async () => {
    await d.member('tokens-owner@example.com', 'Owner');
    const { context, page, problems } = await d.context();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.s.apiUrl });
    await d.signIn(page, 'tokens-owner@example.com', '/members');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Tokens', exact: true }).click();
    await titled(page, 'Tokens · opsplatform');

    // An Owner is offered every scope.
    assert.equal(await page.getByRole('checkbox').count(), 16);
    await page.getByLabel('Name').fill('game server eu-1');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('alert').filter({ hasText: 'choose at least one scope' }).waitFor();
    await page.getByRole('checkbox', { name: /logs:write/ }).check();
    await page.getByRole('checkbox', { name: /logs:read/ }).check();
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create token' }).click();

    const panel = page.getByRole('region', { name: 'New token' });
    await panel.getByText('you will not see it again').waitFor();
    const secret = await page.getByTestId('token-secret').inputValue();
    assert.match(secret, /^ops_live_[A-Za-z0-9]{40,}$/);
    await panel.getByRole('button', { name: 'Copy' }).click();
    await panel.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await d.screenshot(page, 'tokens-secret');

    // It works against /v1 with exactly the chosen scopes.
    const ingest = await d.s.request('POST', '/datasets/tokens-test/ingest', { token: secret, json: [{ message: 'hello from a dashboard token' }] });
    assert.equal(ingest.status, 200, ingest.text);
    assert.equal((await d.s.request('GET', '/media', { token: secret })).status, 403);

    // Once dismissed, it is nowhere on the page any more.
    await panel.getByRole('button', { name: 'I have copied it' }).click();
    await panel.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(secret));

    const created = await d.s.server.ctx.metadata.db.selectFrom('api_tokens').select('id').where('name', '=', 'game server eu-1').executeTakeFirstOrThrow();
    await page.reload();
    await titled(page, 'Tokens · opsplatform');
    const row = page.locator(`tr[data-token-id="${created.id}"]`);
    await row.waitFor();
    assert.deepEqual(await row.getByRole('list', { name: 'Scopes of game server eu-1' }).getByRole('listitem').allTextContents(), ['logs:read', 'logs:write']);
    assert.equal((await row.locator('td').nth(2).textContent())?.trim(), 'live');
    // Created by the signed-in member; used once (by the ingest); expires in 30 days.
    assert.equal((await row.locator('td').nth(3).textContent())?.trim(), 'you');
    assert.notEqual((await row.locator('td').nth(4).textContent())?.trim(), 'never');
    assert.notEqual((await row.locator('td').nth(5).textContent())?.trim(), 'never');
    assert.equal(await page.getByRole('columnheader', { name: 'Created by' }).count(), 1);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'tokens');

    // Revoke: asked first; Escape cancels and nothing happens.
    await row.getByRole('button', { name: 'Revoke' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the token “game server eu-1”?' });
    await dialog.getByText('cannot be undone').waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await d.s.request('POST', '/query', { token: secret, json: { q: 'dataset:tokens-test' } })).status, 200);
    // Then with the keyboard only: Enter opens the dialog, focus starts on Cancel, Tab → Revoke token.
    await row.getByRole('button', { name: 'Revoke' }).focus();
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Cancel');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Revoke token');
    await page.keyboard.press('Enter');
    await row.waitFor({ state: 'detached' });
    await page.getByRole('status').filter({ hasText: 'revoked' }).waitFor();
    const refused = await d.s.request('POST', '/query', { token: secret, json: { q: 'dataset:tokens-test' } });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, 'unauthorized');

    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a Developer is offered only their scopes and sees only their own tokens; the API refuses more scopes', async () => {
    // A token of the project made by someone else (opsctl or another token): not the Developer's.
    const others = await d.s.request('POST', '/tokens', { token: d.s.tenants.a.token, json: { name: 'ci pipeline', scopes: ['logs:write'] } });
    assert.equal(others.status, 201, others.text);
    await d.member('tokens-dev@example.com', 'Developer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'tokens-dev@example.com', '/tokens');
    await page.goto(`${d.url}/tokens`);
    await titled(page, 'Tokens · opsplatform');
    await page.getByText('you see and revoke only the tokens you created').waitFor();
    const offered = (await page.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).sort();
    assert.deepEqual(offered, ['logs:read', 'logs:write', 'media:read', 'media:write', 'members:read', 'monitors:read', 'monitors:write', 'tokens:write', 'usage:read']);
    await page.getByText('No active tokens in live mode yet.').waitFor();

    await page.getByLabel('Name').fill('my uploader');
    await page.getByRole('checkbox', { name: /media:write/ }).check();
    await page.getByLabel('Token mode').selectOption('test');
    await page.getByRole('button', { name: 'Create token' }).click();
    const secret = await page.getByTestId('token-secret').inputValue();
    assert.match(secret, /^ops_test_/);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'tokens-secret');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    // A test token is listed in test mode; the list here is live mode's.
    await page.getByText('No active tokens in live mode yet.').waitFor();
    await page.getByLabel('Mode', { exact: true }).selectOption('test');
    await page.locator('tr', { hasText: 'my uploader' }).waitFor();
    assert.equal(await page.locator('tr', { hasText: 'ci pipeline' }).count(), 0);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'tokens');

    // The API refuses a scope beyond the role, even if the page were bypassed; and another's token is not theirs to revoke.
    assert.equal(await withSessionToken(page, target, 'POST', '/v1/tokens', { name: 'sneaky', scopes: ['members:write'] }), 403);
    assert.equal(await withSessionToken(page, target, 'DELETE', `/v1/tokens/${others.body.id}`), 404);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a Viewer sees no token controls, and the API refuses the Viewer session token', async () => {
    await d.member('tokens-viewer@example.com', 'Viewer');
    const listed = await d.s.request('POST', '/tokens', { token: d.s.tenants.a.token, json: { name: 'not for viewers', scopes: ['logs:read'] } });
    for (const viewport of [widths.desktop, widths.phone]) {
      const { context, page, problems } = await d.context(viewport);
      await d.signIn(page, 'tokens-viewer@example.com', '/tokens');
      await page.goto(`${d.url}/tokens`);
      await titled(page, 'Tokens · opsplatform');
      await page.getByTestId('tokens-read-only').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Create token' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Revoke' }).count(), 0);
      assert.equal(await page.getByRole('checkbox').count(), 0);
      await assertNoPageOverflow(page);
      await d.screenshot(page, 'tokens-viewer');
      if (viewport === widths.desktop) {
        assert.equal(await withSessionToken(page, target, 'GET', '/v1/tokens'), 403);
        assert.equal(await withSessionToken(page, target, 'POST', '/v1/tokens', { name: 'x', scopes: ['logs:read'] }), 403);
        assert.equal(await withSessionToken(page, target, 'DELETE', `/v1/tokens/${listed.body.id}`), 403);
      }
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }
  });
});
