// The explorer's saved searches (DECISIONS.md §19) and its link to the monitor form, in Chromium:
// save the editor's query and range under a typed name, reload, open it, delete it; a Viewer
// sees the list but no Save, Delete or monitor link, and the API refuses them the writes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertNoPageOverflow, noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { clearEditor, editorText, explorerOwner, runQuery, seedExplorer, settled } from '../../test-support/dashboard/test-explorer.js';
import { needs } from '../../test-support/ci.js';

interface Saved {
  id: string;
  name: string;
  q: string;
  range: { last: string } | { from: string; to: string } | null;
}

describe('explorer saved searches in Chromium: save, reload, open, delete; the monitor link; a Viewer', needs(noBrowser), () => {
  let d: Dashboard;
  const now = Date.now();
  const viewer = 'saved-viewer@example.com';
  before(async () => {
    d = await startDashboard();
    await seedExplorer(d, now);
    await d.member(viewer, 'Viewer');
  });
  after(() => d?.close());

  const listed = async (): Promise<Saved[]> => {
    const res = await d.s.request('GET', '/searches');
    assert.equal(res.status, 200, res.text);
    return res.body.searches as Saved[];
  };
  const rangeSelect = (page: Page) => page.getByLabel('Time range', { exact: true });
  const item = (page: Page, name: string) => page.locator(`[data-testid=saved-search][data-name="${name}"]`);

  /** Opens Save…, types the name key by key (at `delay` ms a key) and saves. */
  async function save(page: Page, name: string, delay: number): Promise<void> {
    await page.getByTestId('save-search').click();
    const input = page.getByTestId('save-search-name');
    await input.waitFor();
    await input.click();
    await page.keyboard.type(name, { delay });
    assert.equal(await input.inputValue(), name, `the name typed at ${delay} ms a key`);
    await page.getByTestId('save-search-submit').click();
  }

  /** Opens the list and the search of that name; waits for the explorer to have run it. */
  async function open(page: Page, name: string, q: string): Promise<void> {
    await page.getByTestId('saved-searches').click();
    await item(page, name).getByRole('button', { name, exact: true }).click();
    await settled(page, q);
    assert.equal(await editorText(page), q);
    assert.equal(new URL(page.url()).searchParams.get('q'), q);
  }

  async function remove(page: Page, name: string): Promise<void> {
    await page.getByTestId('saved-searches').click();
    await item(page, name).getByTestId('delete-search').click();
    const dialog = page.getByRole('dialog', { name: `Delete the saved search “${name}”?` });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await item(page, name).waitFor({ state: 'detached' });
    await page.getByTestId('saved-notice').filter({ hasText: `Deleted “${name}”.` }).waitFor();
  }

  for (const [viewport, delay] of [
    ['desktop', 0],
    ['phone', 40],
  ] as const) {
    test(`at ${widths[viewport].width} px (typing at ${delay} ms a key): save the query and range, reload, open it, delete it; the monitor link follows the editor`, async () => {
      const { context, page, problems } = await d.context(widths[viewport]);
      await d.signIn(page, explorerOwner);
      await titled(page, 'Explorer · opsplatform');
      await settled(page);
      const name = `warn and up ${viewport}`;
      const q = `dataset:game AND severity >= warn AND source:srv-${viewport === 'desktop' ? 1 : 2}`;
      await runQuery(page, q, delay);
      await rangeSelect(page).selectOption('24h');
      await page.waitForURL(/range=24h/);
      await settled(page, q);
      const rows = await page.locator('[data-testid=events] .event').count();

      // The monitor link carries the editor's text, also before it is run.
      const monitor = page.getByTestId('create-monitor');
      assert.equal(await monitor.getAttribute('href'), `/dashboard/alerts/new?q=${encodeURIComponent(q)}`);

      await save(page, name, delay);
      await page.getByTestId('saved-notice').filter({ hasText: `Saved “${name}”.` }).waitFor();
      const saved = (await listed()).find((s) => s.name === name);
      assert.deepEqual({ q: saved?.q, range: saved?.range }, { q, range: { last: '24h' } });
      await assertNoPageOverflow(page);
      await d.screenshot(page, `saved-searches-saved-${viewport}`);

      // The same name again is refused (409) and said so; nothing is added.
      await save(page, name, delay);
      await page.getByText('choose another name').waitFor();
      assert.equal((await listed()).filter((s) => s.name === name).length, 1);
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();

      // Another query and range in the editor, then a reload: the saved one brings its own back.
      const other = 'event:match.start';
      await runQuery(page, other, delay);
      await rangeSelect(page).selectOption('15m');
      await page.waitForURL(/range=15m/);
      await settled(page, other);
      await clearEditor(page);
      await page.keyboard.type('severity:error', { delay });
      assert.equal(await monitor.getAttribute('href'), `/dashboard/alerts/new?q=${encodeURIComponent('severity:error')}`);
      await page.reload();
      await settled(page, other);
      await open(page, name, q);
      assert.equal(await rangeSelect(page).inputValue(), '24h');
      assert.equal(new URL(page.url()).searchParams.get('range'), '24h');
      assert.equal(await page.locator('[data-testid=events] .event').count(), rows);
      assert.equal(await monitor.getAttribute('href'), `/dashboard/alerts/new?q=${encodeURIComponent(q)}`);
      await assertNoPageOverflow(page);
      await d.screenshot(page, `saved-searches-opened-${viewport}`);

      await remove(page, name);
      assert.equal((await listed()).filter((s) => s.name === name).length, 0);
      // The one refusal provoked on purpose: the 409 of the duplicate name.
      assert.deepEqual(unexpected(problems), []);
      assert.ok(problems.every((p) => /status of 409/.test(p)), problems.join('\n'));
      await context.close();
    });
  }

  test('a Viewer opens saved searches but sees no Save, Delete or monitor link; the API refuses their writes', async () => {
    const created = await d.s.request('POST', '/searches', { json: { name: 'errors', q: 'severity >= error', range: { last: '1h' } } });
    assert.equal(created.status, 201, created.text);
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, viewer);
    await settled(page);
    await open(page, 'errors', 'severity >= error');
    assert.equal(await page.getByTestId('save-search').count(), 0);
    assert.equal(await page.getByTestId('create-monitor').count(), 0);
    await page.getByTestId('saved-searches').click();
    await item(page, 'errors').waitFor();
    assert.equal(await page.getByTestId('delete-search').count(), 0);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'saved-searches-viewer');

    const { orgId, projectId } = d.s.tenants.a;
    const { token, scopes } = await page.evaluate(async (target) => {
      const r = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target) });
      return (await r.json()) as { token: string; scopes: string[] };
    }, { org_id: orgId, project_id: projectId, mode: 'live' });
    assert.ok(scopes.includes('logs:read') && !scopes.includes('logs:write'));
    assert.equal((await d.s.request('GET', '/searches', { token })).status, 200);
    const post = await d.s.request('POST', '/searches', { token, json: { name: 'mine', q: '' } });
    assert.equal(post.status, 403);
    assert.equal(post.body.error.required_scope, 'logs:write');
    const del = await d.s.request('DELETE', `/searches/${created.body.id as string}`, { token });
    assert.equal(del.status, 403);
    assert.deepEqual(problems, []);
    await context.close();
  });
});
