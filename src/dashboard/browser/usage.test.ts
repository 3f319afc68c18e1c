import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { sized } from '../../test-support/media/test-files.js';
import { needs } from '../../test-support/ci.js';

const imageBytes = 2_500_000;

describe('usage and plan page in Chromium: quota bars, plan limits, the limits reached', needs(noBrowser), () => {
  let d: Dashboard;
  before(async () => {
    // org A on free: 1 GB, 3 datasets, 1,000,000 events and 10,000 queries a month
    d = await startDashboard({ plan: 'free' });
    const events = Array.from({ length: 1234 }, (_, i) => ({ event: 'tick', payload: { i } }));
    assert.equal((await d.s.request('POST', '/datasets/game/ingest', { json: events })).body.ingested, 1234);
    const upload = await d.s.request('POST', '/media/base64', { json: { filename: 'big.png', content_type: 'image/png', data: sized('image/png', imageBytes).toString('base64') } });
    assert.equal(upload.status, 201, upload.text);
    // One monitor of the free plan's 3 (the monitors bar counts them, not a monthly meter).
    const monitor = await d.s.request('POST', '/monitors', { json: { name: 'kicks', kind: 'match', q: 'event:player.kick', channel_ids: [] } });
    assert.equal(monitor.status, 201, monitor.text);
  });
  const addMonitor = async (name: string) => assert.equal((await d.s.request('POST', '/monitors', { json: { name, kind: 'match', q: 'event:x', channel_ids: [] } })).status, 201);
  after(() => d?.close());

  const usage = async () => (await d.s.request('GET', '/usage')).body as { plan: string; quotas: Array<{ metric: string; used: number; limit: number | null }> };
  const used = async (metric: string) => (await usage()).quotas.find((q) => q.metric === metric)!.used;
  const meter = (page: Page, metric: string) => page.getByTestId(`quota-${metric}`);
  const amount = (page: Page, metric: string) => meter(page, metric).getByTestId('amount').textContent();
  const barWidth = (page: Page, metric: string) => meter(page, metric).locator('.bar > span').evaluate((el) => (el as HTMLElement).style.width);

  test('an Owner sees the plan, bars for storage, events, queries and monitors in human units, and the plan limits', async () => {
    await d.member('owner-usage@example.com', 'Owner');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'owner-usage@example.com', '/datasets');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Usage', exact: true }).click();
    await titled(page, 'Usage · opsplatform');
    await page.getByRole('heading', { name: 'Usage and plan' }).waitFor();
    await page.getByTestId('project-datasets').waitFor();
    assert.match((await page.getByTestId('plan').textContent()) ?? '', /^Plan free · this period: /);

    assert.equal(await used('storage_bytes'), imageBytes);
    assert.equal(await amount(page, 'storage_bytes'), '2.5 MB of 1 GB');
    assert.equal(await barWidth(page, 'storage_bytes'), '0.25%');
    assert.equal(await amount(page, 'events_month'), '1,234 of 1,000,000');
    assert.equal(await meter(page, 'events_month').getByRole('meter').getAttribute('aria-valuenow'), '1234');
    assert.equal(await meter(page, 'events_month').getByRole('meter').getAttribute('aria-valuemax'), '1000000');
    // the page's own GET /v1/usage is no query; queries counted are SOQL ones only. The Datasets
    // page the sign-in landed on ran one, whose charge may be counted after this page read the
    // usage: read again (a reload) until the page and the API agree, at most a few times.
    let queries = await used('queries_month');
    for (let attempt = 0; attempt < 5 && (await amount(page, 'queries_month')) !== `${queries} of 10,000`; attempt++) {
      await new Promise((r) => setTimeout(r, 200));
      await page.reload();
      await page.getByTestId('project-datasets').waitFor();
      queries = await used('queries_month');
    }
    assert.equal(await amount(page, 'queries_month'), `${queries} of 10,000`);
    await meter(page, 'events_month').getByText('At the limit, ingest is refused with quota_exceeded (HTTP 402)').waitFor();
    assert.equal(await amount(page, 'monitors'), '1 of 3');
    assert.equal(await meter(page, 'monitors').getByRole('meter').getAttribute('aria-valuemax'), '3');
    await meter(page, 'monitors').getByText('At the limit, creating a monitor is refused with quota_exceeded (HTTP 402)').waitFor();

    const limits = page.getByTestId('plan-limits');
    const limit = (what: string) => limits.getByRole('row').filter({ has: page.getByRole('rowheader', { name: what, exact: true }) }).locator('td.value').textContent();
    assert.equal(await limit('Largest file'), '10 MB');
    assert.equal(await limit('Storage'), '1 GB');
    assert.equal(await limit('Datasets'), '3');
    assert.equal(await page.getByTestId('project-datasets').textContent(), '; this project has 1 in live mode');
    assert.equal(await limit('Retention'), '7 days');
    assert.equal(await limit('Live tail'), 'not included');
    assert.equal(await limit('Events per month'), '1,000,000');
    assert.equal(await limit('Queries per month'), '10,000');
    assert.equal(await limit('Monitors'), '3');
    await d.screenshot(page, 'usage');

    // more events and media: Refresh shows them
    await d.s.request('POST', '/datasets/game/ingest', { json: [{ event: 'one more' }] });
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid="quota-events_month"] [data-testid="amount"]')?.textContent === '1,235 of 1,000,000');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('at the limits: the events quota is shown as reached, and Datasets explains the refusal past the datasets cap', async () => {
    await d.member('admin-usage@example.com', 'Admin');
    for (const name of ['second', 'third']) assert.equal((await d.s.request('POST', '/datasets', { json: { name } })).status, 201);
    const { orgId } = d.s.tenants.a;
    await d.s.server.ctx.quotas.consume(orgId, 'free', 'events_month', 1_000_000 - (await used('events_month')));
    for (const name of ['second monitor', 'third monitor']) await addMonitor(name);
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'admin-usage@example.com', '/usage');
    await page.getByTestId('project-datasets').filter({ hasText: 'this project has 3 in live mode' }).waitFor();
    assert.equal(await amount(page, 'events_month'), '1,000,000 of 1,000,000');
    assert.equal(await barWidth(page, 'events_month'), '100%');
    assert.equal(await meter(page, 'events_month').locator('.bar.over').count(), 1);
    await meter(page, 'events_month').getByText('Limit reached: refused until').waitFor();
    assert.equal(await meter(page, 'storage_bytes').locator('.bar.over').count(), 0);
    assert.equal(await amount(page, 'monitors'), '3 of 3');
    await meter(page, 'monitors').getByText('Limit reached: new monitors are refused until one is deleted').waitFor();
    assert.equal((await d.s.request('POST', '/monitors', { json: { name: 'fourth', kind: 'match', q: 'event:x', channel_ids: [] } })).body.error.code, 'quota_exceeded');
    await d.screenshot(page, 'usage-limits');

    // the refusal where it happens names the metric and the numbers, and links here
    await page.goto(`${d.url}/datasets`);
    const form = page.getByRole('region', { name: 'New dataset' });
    await form.getByLabel('Name').fill('fourth');
    await form.getByRole('button', { name: 'Create dataset' }).click();
    const alert = form.getByRole('alert');
    await alert.filter({ hasText: 'the plan allows 3 datasets and all are in use' }).waitFor();
    assert.match((await alert.textContent()) ?? '', /Datasets: 3 of 3 used on your plan\. See usage and plan$/);
    await alert.getByRole('link', { name: 'See usage and plan' }).click();
    await titled(page, 'Usage · opsplatform');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a Viewer reads usage but not billing: the page says so, and the API refuses billing to their session token', async () => {
    await d.member('viewer-usage@example.com', 'Viewer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'viewer-usage@example.com', '/usage');
    await meter(page, 'storage_bytes').waitFor();
    assert.equal(await amount(page, 'storage_bytes'), '2.5 MB of 1 GB');
    await page.getByTestId('no-billing').filter({ hasText: 'your role (Viewer) cannot read' }).waitFor();
    assert.equal(await page.getByTestId('plan-limits').count(), 0);
    assert.equal(await page.getByTestId('project-datasets').count(), 0);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the usage page overflows at 390 px');
    await d.screenshot(page, 'usage-viewer');

    const { orgId, projectId } = d.s.tenants.a;
    const { token, scopes } = await page.evaluate(async (target) => {
      const r = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target) });
      return (await r.json()) as { token: string; scopes: string[] };
    }, { org_id: orgId, project_id: projectId, mode: 'live' });
    assert.ok(scopes.includes('usage:read') && !scopes.includes('billing:read'));
    assert.equal((await d.s.request('GET', '/usage', { token })).status, 200);
    const billing = await d.s.request('GET', '/billing', { token });
    assert.equal(billing.status, 403);
    assert.equal(billing.body.error.required_scope, 'billing:read');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('at 390 px an Owner sees every bar and the plan limits without page overflow', async () => {
    await d.member('phone-usage@example.com', 'Owner');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'phone-usage@example.com', '/usage');
    await page.getByTestId('project-datasets').waitFor();
    await meter(page, 'queries_month').waitFor();
    await meter(page, 'monitors').waitFor();
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'the usage page overflows at 390 px');
    await d.screenshot(page, 'usage');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});
