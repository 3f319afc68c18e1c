import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertNoPageOverflow, noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

describe('dashboard Audit page in Chromium', needs(noBrowser), () => {
  let d: Dashboard;
  let created: { id: string };
  before(async () => {
    d = await startDashboard();
    await d.member('audit-owner@example.com', 'Owner');
    await d.member('audit-dev@example.com', 'Developer');
    // Changes to read back: a token created and revoked through the API, a dataset.
    const token = await d.s.request('POST', '/tokens', { json: { name: 'ci runner', scopes: ['media:read'] }, headers: { 'user-agent': 'browser-test-client/1' } });
    assert.equal(token.status, 201, token.text);
    created = token.body;
    assert.equal((await d.s.request('DELETE', `/tokens/${created.id}`)).status, 200);
    assert.equal((await d.s.request('POST', '/datasets', { json: { name: 'audited' } })).status, 201);
  });
  after(() => d?.close());

  for (const [name, viewport] of Object.entries(widths)) {
    test(`${name} (${viewport.width} px): entries newest first, filtered by action and by a typed target id, one opened on its details; no console errors`, async () => {
      const { context, page, problems } = await d.context(viewport);
      try {
        await d.signIn(page, 'audit-owner@example.com', '/audit');
        await titled(page, 'Audit · opsplatform');
        const table = page.getByTestId('audit-table');
        await table.waitFor();
        // The Owner's own sign-in is the newest entry.
        const first = table.locator('tbody tr').first();
        assert.match((await first.textContent()) ?? '', /user\.sign_in/);
        assert.ok((await table.locator('tbody tr').count()) >= 5);
        await assertNoPageOverflow(page);

        await page.getByLabel('Action').selectOption('token.revoke');
        await page.getByRole('button', { name: 'Apply filters' }).click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="audit-table"] tbody tr[data-entry-id]').length === 1);
        const row = table.locator('tbody tr').first();
        assert.match((await row.textContent()) ?? '', /token\.revoke/);
        await row.getByRole('button', { name: 'Details' }).click();
        const details = page.getByTestId('audit-details');
        await details.waitFor();
        const text = (await details.textContent()) ?? '';
        assert.match(text, new RegExp(created.id));
        assert.match(text, /browser-test-client\/1|127\.0\.0\.1/);
        assert.match(text, /req_/);
        await assertNoPageOverflow(page);
        await d.screenshot(page, 'audit-details');

        // Any action, this target only: typed key by key.
        await page.getByLabel('Action').selectOption('');
        await page.getByLabel('Target id').pressSequentially(created.id);
        await page.getByRole('button', { name: 'Apply filters' }).click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="audit-table"] tbody tr[data-entry-id]').length === 2);
        const actions = await table.locator('tbody tr[data-entry-id] code').allTextContents();
        assert.deepEqual(actions, ['token.revoke', 'token.create']);

        await page.getByLabel('Target id').fill('');
        await page.getByLabel('Target id').pressSequentially('tok_none');
        await page.getByRole('button', { name: 'Apply filters' }).click();
        await page.getByTestId('audit-empty').waitFor();
        await page.getByRole('button', { name: 'Clear' }).click();
        await table.waitFor();
        assert.deepEqual(unexpected(problems), []);
      } finally {
        await context.close();
      }
    });
  }

  test('a Developer is told the page needs audit:read, and no request is refused', async () => {
    const { context, page, problems } = await d.context(widths.phone);
    try {
      await d.signIn(page, 'audit-dev@example.com', '/audit');
      await titled(page, 'Audit · opsplatform');
      await page.getByTestId('audit-forbidden').waitFor();
      assert.equal(await page.getByTestId('audit-table').count(), 0);
      assert.deepEqual(problems, []);
    } finally {
      await context.close();
    }
  });
});
