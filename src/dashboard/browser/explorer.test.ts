import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TailClient } from '../../test-support/tail/test-client.js';
import { assertNoPageOverflow, noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { editorText, explorerOwner, minute, rowCount, runQuery, seedExplorer, settled } from '../../test-support/dashboard/test-explorer.js';
import { needs } from '../../test-support/ci.js';

describe('explorer in Chromium: query, errors, filter, histogram, group by, live tail', needs(noBrowser), () => {
  let d: Dashboard;
  const now = Date.now();
  before(async () => {
    // Heartbeats every second, so the connection indicator shows one quickly.
    d = await startDashboard({ env: { OPS_TAIL_HEARTBEAT_MS: '1000' } });
    await seedExplorer(d, now);
  });
  after(() => d?.close());

  test('runs a query with Ctrl+Enter, highlights it, keeps query and range in the URL across a reload', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await titled(page, 'Explorer · opsplatform');
    await settled(page);
    assert.equal(await rowCount(page), 100, 'the empty query shows the newest page');
    await runQuery(page, 'dataset:game AND severity >= warn');
    // Highlighting: keywords, fields, operators and values get their classes.
    assert.equal(await page.locator('.soql-editor .tok-keyword').first().textContent(), 'AND');
    assert.equal(await page.locator('.soql-editor .tok-field').first().textContent(), 'dataset');
    assert.equal(await page.locator('.soql-editor .tok-operator').last().textContent(), '>=');
    assert.equal(await page.locator('.soql-editor .tok-atom').last().textContent(), 'warn');
    const severities = await page.locator('[data-testid=events] .sev').allTextContents();
    assert.ok(severities.length > 0 && severities.every((s) => s === 'warn' || s === 'error'), severities.join(','));
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('q'), 'dataset:game AND severity >= warn');
    assert.equal(url.searchParams.get('range'), '1h');
    // A range from the picker is part of the URL too, and of the query sent.
    await page.getByLabel('Time range', { exact: true }).selectOption('15m');
    await page.waitForURL(/range=15m/);
    await settled(page);
    assert.equal(await page.getByTestId('sent-query').textContent(), 'ts >= now-15m AND (dataset:game AND severity >= warn)');
    const shown = await rowCount(page);
    assert.ok(shown > 0 && shown < severities.length, `${shown} of ${severities.length} in the last 15 minutes`);
    await page.reload();
    await settled(page);
    assert.equal(await editorText(page), 'dataset:game AND severity >= warn');
    assert.equal(await page.getByLabel('Time range', { exact: true }).inputValue(), '15m');
    assert.equal(await rowCount(page), shown);
    // Back returns to the previous query and range.
    await page.goBack();
    await settled(page);
    assert.equal(await page.getByLabel('Time range', { exact: true }).inputValue(), '1h');
    assert.equal(await rowCount(page), severities.length);
    await d.screenshot(page, 'explorer-events');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a parse error is underlined at its position, with the message, also inside the range bounds and in stats', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    await runQuery(page, 'source:srv-1 AND severity >= banana');
    const alert = page.getByTestId('query-error');
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /at character 30 near “banana”: unknown severity 'banana'/);
    assert.equal(await page.locator('.soql-editor .soql-error').textContent(), 'banana');
    // The editor is marked invalid and described by the message for screen readers.
    assert.equal(await page.getByTestId('soql-input').getAttribute('aria-invalid'), 'true');
    assert.match((await page.getByTestId('soql-input').getAttribute('aria-description')) ?? '', /unknown severity/);
    assert.equal(await page.getByRole('textbox', { name: 'SOQL query' }).count(), 1);
    await d.screenshot(page, 'explorer-parse-error');
    // Editing removes the underline.
    await page.getByTestId('soql-input').press('End');
    await page.getByTestId('soql-input').press('Backspace');
    assert.equal(await page.locator('.soql-editor .soql-error').count(), 0);
    // An error in the stats clause maps back past the added bounds.
    await runQuery(page, 'event:player.join stats count() by bin(7x)');
    await page.getByTestId('query-error').filter({ hasText: 'bin width' }).waitFor();
    assert.equal(await page.locator('.soql-editor .soql-error').textContent(), '7x');
    // Unclosed string: underlined from its quote to the end.
    await runQuery(page, 'message:"never closed');
    await page.getByTestId('query-error').filter({ hasText: 'unclosed string' }).waitFor();
    assert.equal(await page.locator('.soql-editor .soql-error').textContent(), '"never closed');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('click-to-filter on a cell and inside the expanded JSON, quoted as SOQL needs; load more by cursor', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    assert.equal(await rowCount(page), 100);
    assert.match((await page.getByTestId('results-count').textContent()) ?? '', /more available/);
    await page.getByTestId('load-more').click();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=events] .event').length === 150);
    assert.equal(await page.getByTestId('load-more').count(), 0, 'no more pages');

    // A source cell: `source:srv-1` added to the (empty) query and run.
    await page.locator('[data-testid=events] .event').first().getByRole('button', { name: 'srv-0' }).click();
    await page.waitForURL(/q=source%3Asrv-0/);
    await settled(page);
    assert.equal(await editorText(page), 'source:srv-0');
    const sources = await page.locator('[data-testid=events] .event .source').allTextContents();
    assert.equal(sources.length, 50);
    assert.ok(sources.every((s) => s === 'srv-0'));

    // Expand the newest event (i = 0): its JSON, and a payload value with a quote, a backslash and an odd key.
    const first = page.locator('[data-testid=events] .event').first();
    await first.getByRole('button', { name: 'Show the event JSON' }).click();
    const json = first.getByTestId('event-json');
    await json.waitFor();
    assert.match((await json.textContent()) ?? '', /"odd key": "say \\"hi\\" \\\\ bye"/);
    assert.match((await json.textContent()) ?? '', /"map": "map-0"/);
    await json.getByRole('button', { name: '"say \\"hi\\" \\\\ bye"' }).click();
    await page.waitForURL(/odd\+key|odd%20key/);
    await settled(page);
    assert.equal(await editorText(page), 'source:srv-0 AND payload.`odd key`:"say \\"hi\\" \\\\ bye"');
    assert.equal(await rowCount(page), 1);
    assert.equal(await page.locator('[data-testid=events] .message').textContent(), 'event number 0');
    // A number and a nested key from the JSON.
    await page.locator('[data-testid=events] .event').first().getByRole('button', { name: 'Show the event JSON' }).click();
    await page.getByTestId('event-json').getByRole('button', { name: '"map-0"' }).click();
    await page.waitForURL(/nested.map/);
    await settled(page);
    assert.match(await editorText(page), / AND payload\.nested\.map:map-0$/);
    assert.equal(await rowCount(page), 1);
    // An OR query is wrapped before a filter is added.
    await runQuery(page, 'actor:player-1 OR actor:player-2');
    await page.locator('[data-testid=events]').getByRole('button', { name: 'match.start' }).first().click();
    await page.waitForURL(/match.start/);
    await settled(page);
    assert.equal(await editorText(page), '(actor:player-1 OR actor:player-2) AND event:match.start');
    const events = await page.locator('[data-testid=events] .event .event-name').allTextContents();
    assert.ok(events.length > 0 && events.every((e) => e === 'match.start'));
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('the histogram is drawn stacked by severity, and dragging over it narrows the range and the query', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    await page.getByTestId('histogram').locator('canvas').waitFor();
    assert.match((await page.getByTestId('histogram-total').textContent()) ?? '', /^150 events · bars of 30s/);
    // The legend: each severity's count over the range, away from the bars…
    const legend = () =>
      page
        .getByTestId('histogram')
        .locator('.u-legend .u-series')
        .evaluateAll((rows) => Object.fromEntries(rows.map((r) => [r.querySelector('.u-label')?.textContent ?? '', r.querySelector('.u-value')?.textContent ?? ''])));
    const severityOf = (i: number) => (i % 10 === 0 ? 'error' : i % 4 === 0 ? 'warn' : 'info');
    const countsIn = (from: number, to: number) => {
      const counts: Record<string, string> = { fatal: '0', error: '0', warn: '0', info: '0', debug: '0' };
      for (let i = 0; i < 150; i++) {
        const ts = now - 30_000 - i * 20_000;
        if (ts >= from && ts < to) counts[severityOf(i)] = String(Number(counts[severityOf(i)]) + 1);
      }
      return counts;
    };
    assert.deepEqual(await legend(), { bar: 'whole range', ...countsIn(0, Infinity) });
    assert.deepEqual(countsIn(0, Infinity), { fatal: '0', error: '15', warn: '30', info: '105', debug: '0' });
    // …and the bar's under the cursor, with its start (local time).
    const plot = (await page.getByTestId('histogram').locator('.u-over').boundingBox())!;
    await page.mouse.move(plot.x + plot.width * 0.6, plot.y + plot.height / 2);
    await page.waitForFunction(() => document.querySelector('[data-testid=histogram] .u-legend .u-series .u-value')?.textContent !== 'whole range');
    const hovered = await legend();
    const start = new Date(hovered.bar!.replace(' ', 'T')).getTime();
    assert.ok(Math.abs(start - (now - 0.4 * 3_600_000)) < 2 * minute, `bar at ${hovered.bar}`);
    const { bar: _bar, ...values } = hovered;
    assert.deepEqual(values, countsIn(start, start + 30_000));
    assert.ok(Object.values(values).some((v) => v !== '0'), 'a bar with events');
    await page.mouse.move(plot.x + plot.width / 2, plot.y + plot.height + 200);
    await page.waitForFunction(() => document.querySelector('[data-testid=histogram] .u-legend .u-series .u-value')?.textContent === 'whole range');
    assert.deepEqual(await legend(), { bar: 'whole range', ...countsIn(0, Infinity) });
    // The histogram's query: the range, the filter, count by severity and bin.
    await runQuery(page, 'severity >= info');
    const over = page.getByTestId('histogram').locator('.u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 8 });
    await page.mouse.up();
    await page.waitForURL(/range=custom/);
    await settled(page);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('range'), 'custom');
    const from = Date.parse(url.searchParams.get('from')!);
    const to = Date.parse(url.searchParams.get('to')!);
    // 55%..75% of the last hour: 12 minutes, ending about 15 minutes ago.
    assert.ok(Math.abs(to - from - 12 * minute) < 2 * minute, `${(to - from) / minute} minutes`);
    assert.ok(Math.abs(Date.now() - to - 15 * minute) < 3 * minute, `ends ${(Date.now() - to) / minute} minutes ago`);
    assert.equal(await page.getByTestId('sent-query').textContent(), `ts >= ${new Date(from).toISOString()} AND ts < ${new Date(to).toISOString()} AND (severity >= info)`);
    assert.equal(await page.getByLabel('Time range', { exact: true }).inputValue(), 'custom');
    const expected = Array.from({ length: 150 }, (_, i) => now - 30_000 - i * 20_000).filter((t) => t >= from && t < to).length;
    assert.equal(await rowCount(page), expected);
    assert.match((await page.getByTestId('histogram-total').textContent()) ?? '', new RegExp(`^${expected} events`));
    // The custom inputs hold the range (local time); Apply with an earlier "From" runs it.
    // In the input's normalised form (HTML's "valid normalized local date and time string"):
    // the seconds are left out when they are zero, as Chromium shows them.
    const local = (ms: number) => {
      const d = new Date(ms);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}${d.getSeconds() ? `:${p(d.getSeconds())}` : ''}`;
    };
    assert.equal(await page.getByTestId('range-from').inputValue(), local(from));
    assert.equal(await page.getByTestId('range-to').inputValue(), local(to));
    const earlier = Math.floor((now - 55 * minute) / 1000) * 1000;
    await page.getByTestId('range-from').fill(local(earlier));
    await page.getByRole('button', { name: 'Apply range' }).click();
    await page.waitForURL((u) => u.searchParams.get('from') === new Date(earlier).toISOString());
    await settled(page);
    // Apply takes both ends from the inputs, which show whole seconds: "to" may now be up to a
    // second before the dragged one (an event in that second was counted once in 20 runs).
    const applied = Date.parse(new URL(page.url()).searchParams.get('to')!);
    assert.ok(applied <= to && to - applied < 1_000, `to ${new Date(applied).toISOString()} after Apply`);
    const wider = Array.from({ length: 150 }, (_, i) => now - 30_000 - i * 20_000).filter((t) => t >= earlier && t < applied).length;
    assert.equal(await rowCount(page), Math.min(100, wider));
    assert.match((await page.getByTestId('histogram-total').textContent()) ?? '', new RegExp(`^${wider} events`));
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('group by and stats show a table and a bar chart instead of events', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    await runQuery(page, 'dataset:game group by source');
    const table = page.getByTestId('aggregate-table');
    await table.waitFor();
    assert.deepEqual(await table.locator('tbody tr').allTextContents(), ['srv-050', 'srv-150', 'srv-250']);
    await page.getByTestId('aggregate-chart').locator('canvas').waitFor();
    assert.equal(await page.getByTestId('events').count(), 0);
    await d.screenshot(page, 'explorer-group-by');
    // A group's value filters too, keeping the group by.
    await table.getByRole('button', { name: 'srv-1' }).click();
    await page.waitForURL(/srv-1/);
    await settled(page);
    assert.equal(await editorText(page), 'dataset:game AND source:srv-1 group by source');
    assert.deepEqual(await page.getByTestId('aggregate-table').locator('tbody tr').allTextContents(), ['srv-150']);
    await runQuery(page, 'stats count(), avg(payload.ping) by payload.region');
    const stats = page.getByTestId('aggregate-table');
    await stats.locator('tbody tr').first().waitFor();
    assert.deepEqual(await stats.locator('thead th').allTextContents(), ['payload.region', 'count()', 'avg(payload.ping)']);
    assert.equal(await stats.locator('tbody tr').count(), 2);
    await page.getByTestId('aggregate-chart').locator('canvas').waitFor();
    await runQuery(page, 'stats count() by source, bin(10m)');
    await page.getByTestId('aggregate-chart').locator('canvas').waitFor();
    assert.ok((await page.getByTestId('aggregate-table').locator('tbody tr').count()) >= 15);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('live tail: new events stream in at the top, heartbeat shown, pause holds them, a scrolled reader keeps their place', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    await runQuery(page, 'dataset:game');
    await page.getByTestId('live').click();
    assert.equal(await page.getByTestId('live').getAttribute('aria-pressed'), 'true');
    const connection = page.getByTestId('connection');
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    await connection.filter({ hasText: /last heartbeat \d+ s ago/ }).waitFor();
    // The page's results stay below as the start of the live list.
    assert.equal(await rowCount(page), 100);
    const ingest = async (message: string, dataset = 'game') => {
      const res = await d.s.request('POST', `/datasets/${dataset}/ingest`, { json: [{ event: 'live.test', message, source: 'live-src' }] });
      assert.equal(res.status, 200, res.text);
    };
    await ingest('live one');
    await ingest('not this one', 'other');
    const firstMessage = () => page.locator('[data-testid=events] .event').first().locator('.message').textContent();
    await page.locator('[data-testid=events] .message', { hasText: 'live one' }).waitFor();
    assert.equal(await firstMessage(), 'live one');
    await d.screenshot(page, 'explorer-live');

    // Pause: arrivals wait, bounded, until Resume.
    await page.getByTestId('pause').click();
    await ingest('while paused');
    await page.getByTestId('paused-note').filter({ hasText: '1 new event waiting' }).waitFor();
    assert.equal(await page.locator('[data-testid=events] .message', { hasText: 'while paused' }).count(), 0);
    await page.getByTestId('pause').click();
    await page.locator('[data-testid=events] .message', { hasText: 'while paused' }).waitFor();
    assert.equal(await firstMessage(), 'while paused');

    // Scrolled down into the rows: the rows in view stay put, a button offers the new ones.
    await page.evaluate(() => window.scrollTo(0, document.querySelector('.live-rows')!.getBoundingClientRect().top + window.scrollY + 900));
    const anchor = await page.evaluate(() => {
      const rows = [...document.querySelectorAll<HTMLElement>('[data-testid=events] .event')];
      const row = rows.find((r) => r.getBoundingClientRect().top > 0)!;
      return { id: row.dataset.eventId!, top: row.getBoundingClientRect().top, scrollY: window.scrollY };
    });
    await ingest('while reading');
    await page.getByTestId('new-events').filter({ hasText: '1 new event' }).waitFor();
    const after = await page.evaluate((id) => ({ top: document.querySelector(`[data-event-id="${id}"]`)!.getBoundingClientRect().top, scrollY: window.scrollY }), anchor.id);
    assert.equal(after.top, anchor.top, 'the row the reader looks at did not move');
    assert.equal(after.scrollY, anchor.scrollY);
    await page.getByTestId('new-events').click();
    await page.locator('[data-testid=events] .message', { hasText: 'while reading' }).waitFor();
    assert.equal(await firstMessage(), 'while reading');
    assert.ok(await page.locator('[data-testid=events] .event').first().isVisible());
    assert.equal(await page.getByTestId('new-events').count(), 0);

    // Click-to-filter while live restarts the tail with the narrower query.
    await page.locator('[data-testid=events] .event').first().getByRole('button', { name: 'live-src' }).click();
    await page.waitForURL(/live-src/);
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    await ingest('filtered in');
    await page.locator('[data-testid=events] .message', { hasText: 'filtered in' }).waitFor();

    // Toggling Live off stops the stream and shows stored events again.
    await page.getByTestId('live').click();
    await page.getByTestId('histogram').waitFor();
    assert.equal(await page.getByTestId('connection').count(), 0);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('live tail refusals in words: 402 names the plan (free has no tail), 429 the session limit; leaving the page frees the session', async () => {
    // Org B is on the free plan: no live tail.
    await d.member('explorer-b@example.com', 'Viewer', d.s.tenants.b.orgId);
    const b = await d.context(widths.phone);
    await d.signIn(b.page, 'explorer-b@example.com');
    await settled(b.page);
    await b.page.getByTestId('live').click();
    const refusal = b.page.getByTestId('tail-refusal');
    await refusal.waitFor();
    const text = (await refusal.textContent()) ?? '';
    assert.match(text, /not part of this organisation's plan/);
    assert.match(text, /needs the pro plan/);
    assert.match(text, /live tail is not part of the free plan/);
    assert.equal(await b.page.getByTestId('connection').getAttribute('data-state'), 'stopped');
    await assertNoPageOverflow(b.page);
    await d.screenshot(b.page, 'explorer-tail-402');
    assert.deepEqual(unexpected(b.problems), []);
    await b.context.close();

    // 429: the page's own token already holds the three sessions a token may have.
    const { context, page, problems } = await d.context();
    let token = '';
    page.on('request', (r) => {
      const auth = r.headers().authorization;
      if (r.url().includes('/v1/') && auth) token = auth.slice('Bearer '.length);
    });
    await d.signIn(page, explorerOwner);
    await settled(page);
    assert.ok(token);
    await page.getByTestId('live').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    const clients: TailClient[] = [];
    for (let i = 0; i < 2; i++) {
      const open = await TailClient.open(d.s.baseUrl, token, '');
      assert.equal(open.status, 200);
      if (open.status === 200 && 'client' in open) clients.push(open.client);
    }
    // The page holds the third: a fourth is refused.
    assert.equal((await TailClient.open(d.s.baseUrl, token, '')).status, 429);
    // Leaving the page (here: Live off) frees its session at once.
    await page.getByTestId('live').click();
    let third: Awaited<ReturnType<typeof TailClient.open>> | undefined;
    for (let i = 0; i < 50 && third?.status !== 200; i++) {
      third = await TailClient.open(d.s.baseUrl, token, '');
      if (third.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(third?.status, 200);
    if (third && 'client' in third) clients.push(third.client);
    await page.getByTestId('live').click();
    const limit = page.getByTestId('tail-refusal');
    await limit.waitFor();
    assert.match((await limit.textContent()) ?? '', /At most 3 live tail sessions may be open at once for one API token/);
    await d.screenshot(page, 'explorer-tail-429');
    // Close one elsewhere and try again: connected.
    await clients.pop()!.close();
    await limit.getByRole('button', { name: 'try again' }).click();
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    // Going to another page ends the stream too.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Datasets', exact: true }).click();
    await titled(page, 'Datasets · opsplatform');
    let again: Awaited<ReturnType<typeof TailClient.open>> | undefined;
    for (let i = 0; i < 50 && again?.status !== 200; i++) {
      again = await TailClient.open(d.s.baseUrl, token, '');
      if (again.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(again?.status, 200, 'the page left its tail session');
    if (again && 'client' in again) clients.push(again.client);
    await Promise.all(clients.map((c) => c.close()));
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a group by query cannot go live: explained; a Viewer queries and tails like anyone', async () => {
    await d.member('explorer-viewer@example.com', 'Viewer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'explorer-viewer@example.com');
    await settled(page);
    assert.equal(await rowCount(page), 100);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'explorer-events');
    await runQuery(page, 'group by severity');
    await page.getByTestId('aggregate-table').waitFor();
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'explorer-group-by');
    await page.getByTestId('live').click();
    await page.getByTestId('tail-refusal').filter({ hasText: 'cannot be tailed' }).waitFor();
    await page.getByTestId('live').click();
    await runQuery(page, 'severity >= banana');
    await page.getByTestId('query-error').waitFor();
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'explorer-parse-error');
    await runQuery(page, '');
    await page.getByTestId('live').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    await d.s.request('POST', '/datasets/game/ingest', { json: [{ event: 'viewer.sees', message: 'seen by a viewer' }] });
    await page.locator('[data-testid=events] .message', { hasText: 'seen by a viewer' }).waitFor();
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'explorer-live');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('issue flow: create a token, ingest with it, find the events and narrow the histogram, then see a new one live', async () => {
    const created = await d.s.request('POST', '/tokens', { json: { name: 'flow ingest', scopes: ['logs:write'] } });
    assert.equal(created.status, 201, created.text);
    const ingestToken: string = created.body.token;
    const flow = Array.from({ length: 40 }, (_, i) => ({ ts: new Date(Date.now() - 60_000 - i * 60_000).toISOString(), event: 'flow.step', message: `flow ${i}`, severity: i % 5 ? 'info' : 'warn' }));
    const res = await d.s.request('POST', '/datasets/flow/ingest', { token: ingestToken, json: flow });
    assert.equal(res.status, 200, res.text);

    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    await runQuery(page, 'dataset:flow');
    assert.equal(await rowCount(page), 40);
    assert.match((await page.getByTestId('histogram-total').textContent()) ?? '', /^40 events/);
    const over = page.getByTestId('histogram').locator('.u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + 20);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.9, box.y + 20, { steps: 6 });
    await page.mouse.up();
    await page.waitForURL(/range=custom/);
    await settled(page);
    const narrowed = await rowCount(page);
    assert.ok(narrowed > 10 && narrowed < 40, `${narrowed} events after narrowing`);
    await page.getByTestId('live').click();
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    const live = await d.s.request('POST', '/datasets/flow/ingest', { token: ingestToken, json: [{ event: 'flow.live', message: 'flow arrives live' }] });
    assert.equal(live.status, 200);
    await page.locator('[data-testid=events] .event').first().locator('.message', { hasText: 'flow arrives live' }).waitFor();
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});

describe('explorer live tail in Chromium: a stream the server ends is reopened', needs(noBrowser), () => {
  let d: Dashboard;
  before(async () => {
    // The server closes a stream after 1.5 s without a matching event.
    d = await startDashboard({ env: { OPS_TAIL_IDLE_TIMEOUT_MS: '1500', OPS_TAIL_HEARTBEAT_MS: '500' } });
    await d.member('reconnect@example.com', 'Developer');
  });
  after(() => d?.close());

  test('the indicator says it reconnects and why; events after it still arrive', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, 'reconnect@example.com');
    await settled(page);
    await page.getByTestId('live').click();
    await page.getByTestId('connection').filter({ hasText: /last heartbeat \d+ s ago/ }).waitFor();
    await page.getByTestId('connection').filter({ hasText: /Reconnecting in \d+ s \(closed: no matching event for 1500 ms\)/ }).waitFor();
    await page.waitForFunction(() => document.querySelector('[data-testid=connection]')?.getAttribute('data-state') === 'connected');
    const res = await d.s.request('POST', '/datasets/game/ingest', { json: [{ event: 'after.reconnect', message: 'after the reconnect' }] });
    assert.equal(res.status, 200);
    await page.locator('[data-testid=events] .message', { hasText: 'after the reconnect' }).waitFor();
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});
