import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

const hourMs = 3_600_000;

describe('datasets page in Chromium: list with counts and sparklines, create, edit, archive, schema', needs(noBrowser), () => {
  let d: Dashboard;
  before(async () => {
    d = await startDashboard();
    const now = d.s.server.ctx.clock.now();
    const game = [
      ...Array.from({ length: 5 }, (_, i) => ({ event: 'match.start', severity: 'info', payload: { map: i % 2 ? 'dust' : 'nuke', ping: 40 + i } })),
      ...Array.from({ length: 3 }, (_, i) => ({ event: 'match.end', ts: now - 3 * hourMs, payload: { map: 'dust', ping: 90 + i } })),
    ];
    assert.equal((await d.s.request('POST', '/datasets/game/ingest', { json: game })).body.ingested, 8);
    assert.equal((await d.s.request('POST', '/datasets/auth/ingest', { json: [{ event: 'login' }, { event: 'logout' }] })).body.ingested, 2);
  });
  after(() => d?.close());

  const datasetNames = async () => ((await d.s.request('GET', '/datasets')).body.datasets as Array<{ name: string; retention_days: number }>).map((x) => x.name).sort();
  const row = (page: Page, name: string) => page.getByTestId(`dataset-${name}`);
  const noPageOverflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);

  test('lists the datasets with their 24-hour counts and hourly sparklines; the schema page; "query in explorer"', async () => {
    await d.member('owner-datasets@example.com', 'Owner');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'owner-datasets@example.com', '/usage');
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Datasets', exact: true }).click();
    await titled(page, 'Datasets · opsplatform');
    assert.equal(await row(page, 'game').getByTestId('events-24h').textContent(), '8');
    assert.equal(await row(page, 'auth').getByTestId('events-24h').textContent(), '2');
    // one sparkline canvas per dataset, from one stats query; its accessible name carries the numbers
    const spark = page.getByTestId('sparkline-game');
    await spark.locator('canvas').waitFor();
    assert.equal(await page.locator('[data-testid^="sparkline-"] canvas').count(), 2);
    assert.match((await spark.getAttribute('aria-label')) ?? '', /8 in all, at most 5 in one hour/);
    assert.match((await page.getByTestId('sparkline-auth').getAttribute('aria-label')) ?? '', /2 in all/);
    assert.match((await row(page, 'game').getByTestId('retention').textContent()) ?? '', /^30 days$/);
    await d.screenshot(page, 'datasets');

    // the schema page: payload keys with distinct values and samples, canonical fields with types
    await row(page, 'game').getByRole('link', { name: 'game' }).click();
    await page.getByRole('heading', { name: 'Dataset game' }).waitFor();
    assert.match(page.url(), /\/dashboard\/datasets\/game$/);
    const payload = page.getByTestId('payload-fields');
    await payload.waitFor();
    const mapRow = payload.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'map', exact: true }) });
    assert.equal(await mapRow.getByRole('cell').nth(0).textContent(), '2');
    assert.deepEqual((await mapRow.locator('code').allTextContents()).sort(), ['dust', 'nuke']);
    const pingRow = payload.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'ping', exact: true }) });
    assert.equal(await pingRow.getByRole('cell').nth(0).textContent(), '8');
    const severity = page.getByTestId('canonical-fields').getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'severity', exact: true }) });
    assert.equal(await severity.getByRole('cell').textContent(), 'severity (ordinal)');
    assert.equal(await page.getByTestId('events-24h').textContent(), '8');
    await d.screenshot(page, 'dataset-schema');

    // an unknown dataset is said in words
    await page.goto(`${d.url}/datasets/nope`);
    await page.getByRole('alert').filter({ hasText: 'There is no active dataset named nope' }).waitFor();
    assert.deepEqual(unexpected(problems), []);

    // a key's link and the page's link open the explorer with a query on this dataset (the
    // explorer's own tests check that page)
    await page.goto(`${d.url}/datasets/game`);
    assert.equal(await mapRow.getByRole('link').getAttribute('href'), `/dashboard/?q=${encodeURIComponent('dataset:game AND payload.map exists')}`);
    await page.getByTestId('query-in-explorer').click();
    await titled(page, 'Explorer · opsplatform');
    assert.equal(new URL(page.url()).pathname, '/dashboard/');
    assert.equal(new URL(page.url()).searchParams.get('q'), 'dataset:game');
    await context.close();
  });

  test('a Developer creates, renames, changes retention and archives (after confirming); refusals are shown in words', async () => {
    await d.member('dev-datasets@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'dev-datasets@example.com', '/datasets');
    await row(page, 'game').waitFor();

    // create
    const form = page.getByRole('region', { name: 'New dataset' });
    await form.getByLabel('Name').fill('builds');
    await form.getByLabel('Retention (days)').fill('5');
    await form.getByLabel('Default severity').selectOption('warn');
    await form.getByRole('button', { name: 'Create dataset' }).click();
    await page.getByRole('status').filter({ hasText: 'Dataset builds created.' }).waitFor();
    assert.equal(await row(page, 'builds').getByTestId('retention').textContent(), '5 days');
    assert.equal(await row(page, 'builds').getByTestId('events-24h').textContent(), '0');
    await row(page, 'builds').getByTestId('sparkline-builds').locator('canvas').waitFor();
    assert.deepEqual(await datasetNames(), ['auth', 'builds', 'game']);

    // the API's refusals, in words: a name taken, a retention past the plan's
    await form.getByLabel('Name').fill('game');
    await form.getByRole('button', { name: 'Create dataset' }).click();
    await form.getByRole('alert').filter({ hasText: 'dataset "game" already exists' }).waitFor();
    await form.getByLabel('Name').fill('longer');
    await form.getByLabel('Retention (days)').fill('90');
    await form.getByRole('button', { name: 'Create dataset' }).click();
    await form.getByRole('alert').filter({ hasText: "retention_days may not exceed the plan's retention of 30 days" }).waitFor();

    // rename, in a dialog, with the keyboard
    await page.getByRole('button', { name: 'Edit builds' }).focus();
    await page.keyboard.press('Enter');
    const edit = page.getByRole('dialog', { name: 'Edit dataset builds' });
    await edit.waitFor();
    await edit.getByLabel('Name').fill('ci-builds');
    await edit.getByLabel('Name').press('Enter');
    await page.getByRole('status').filter({ hasText: 'Dataset ci-builds saved.' }).waitFor();
    await row(page, 'ci-builds').waitFor();
    assert.equal(await row(page, 'builds').count(), 0);
    assert.deepEqual(await datasetNames(), ['auth', 'ci-builds', 'game']);

    // retention
    await page.getByRole('button', { name: 'Edit ci-builds' }).click();
    const edit2 = page.getByRole('dialog', { name: 'Edit dataset ci-builds' });
    await edit2.getByLabel('Retention (days)').fill('3');
    await edit2.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Dataset ci-builds saved.' }).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid="dataset-ci-builds"] [data-testid="retention"]')?.textContent === '3 days');
    const listed = (await d.s.request('GET', '/datasets')).body.datasets as Array<{ name: string; retention_days: number }>;
    assert.equal(listed.find((x) => x.name === 'ci-builds')?.retention_days, 3);

    // archive: Cancel (and Escape) keep it; confirming archives it
    await page.getByTestId('archive-ci-builds').click();
    const confirm = page.getByRole('dialog', { name: 'Archive dataset ci-builds?' });
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await page.getByTestId('archive-ci-builds').click();
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await confirm.waitFor({ state: 'hidden' });
    assert.deepEqual(await datasetNames(), ['auth', 'ci-builds', 'game']);
    await page.getByTestId('archive-ci-builds').click();
    await confirm.getByRole('button', { name: 'Archive dataset' }).click();
    await page.getByRole('status').filter({ hasText: 'Dataset ci-builds archived.' }).waitFor();
    await row(page, 'ci-builds').waitFor({ state: 'detached' });
    assert.deepEqual(await datasetNames(), ['auth', 'game']);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a Viewer sees the list and schemas but no controls, and the API refuses their session token', async () => {
    await d.member('viewer-datasets@example.com', 'Viewer');
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'viewer-datasets@example.com', '/datasets');
    await page.getByTestId('sparkline-game').locator('canvas').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Edit / }).count(), 0);
    assert.equal(await page.locator('[data-testid^="archive-"]').count(), 0);
    assert.equal(await page.getByRole('region', { name: 'New dataset' }).count(), 0);
    assert.equal(await page.getByRole('columnheader', { name: 'Actions' }).count(), 0);
    await row(page, 'game').getByRole('link', { name: 'game' }).click();
    await page.getByTestId('payload-fields').waitFor();

    // the session's own short-lived token, exchanged from the page as the app does
    const { orgId, projectId } = d.s.tenants.a;
    const exchanged = await page.evaluate(async (target) => {
      const r = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target) });
      return (await r.json()) as { token: string; scopes: string[] };
    }, { org_id: orgId, project_id: projectId, mode: 'live' });
    assert.ok(exchanged.scopes.includes('logs:read'));
    assert.ok(!exchanged.scopes.includes('logs:write'));
    const token = exchanged.token;
    assert.equal((await d.s.request('GET', '/datasets', { token })).status, 200);
    for (const [method, path, json] of [
      ['POST', '/datasets', { name: 'sneaky' }],
      ['PATCH', '/datasets/game', { name: 'renamed' }],
      ['PATCH', '/datasets/game', { retention_days: 1 }],
      ['DELETE', '/datasets/game', undefined],
    ] as const) {
      const r = await d.s.request(method, path, { token, json });
      assert.equal(r.status, 403, `${method} ${path}`);
      assert.equal(r.body.error.code, 'forbidden');
      assert.equal(r.body.error.required_scope, 'logs:write');
    }
    assert.deepEqual(await datasetNames(), ['auth', 'game']);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('at 390 px: readable without page overflow (the table scrolls inside its frame)', async () => {
    await d.member('phone-datasets@example.com', 'Admin');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'phone-datasets@example.com', '/datasets');
    await page.getByTestId('sparkline-game').locator('canvas').waitFor();
    assert.ok(await noPageOverflow(page), 'the datasets page overflows at 390 px');
    await d.screenshot(page, 'datasets');
    await page.getByRole('button', { name: 'Edit game' }).click();
    await page.getByRole('dialog', { name: 'Edit dataset game' }).waitFor();
    assert.ok(await noPageOverflow(page), 'the edit dialog overflows at 390 px');
    await d.screenshot(page, 'dataset-edit');
    await page.keyboard.press('Escape');
    await page.goto(`${d.url}/datasets/game`);
    await page.getByTestId('payload-fields').waitFor();
    assert.ok(await noPageOverflow(page), 'the schema page overflows at 390 px');
    await d.screenshot(page, 'dataset-schema');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});
