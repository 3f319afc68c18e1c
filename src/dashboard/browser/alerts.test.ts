import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { eventually, startReceiver } from '../../test-support/notifications/test-receiver.js';
import { assertNoPageOverflow, noBrowser, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

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

/** Types into the focused SOQL editor after clicking it (at the end of its text). */
async function typeQuery(page: Page, text: string, delay = 0): Promise<void> {
  await page.getByTestId('soql-input').click();
  await page.keyboard.press('End');
  await page.keyboard.type(text, { delay });
  // The completion list may be open after the last word; Escape closes it.
  await page.keyboard.press('Escape');
}

const bodyOf = (r: Receiver, i: number) => JSON.parse(r.received[i]!.body) as { status: string; monitor: { id: string; name: string }; group: Record<string, unknown>; value: number | null };

describe('dashboard Alerts pages in Chromium', needs(noBrowser), () => {
  let d: Dashboard;
  let target: { org_id: string; project_id: string };
  const receivers: Receiver[] = [];
  before(async () => {
    // Channels may point at the loopback receiver; the evaluator ticks only when the test says.
    d = await startDashboard({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true' }, monitors: { tickMs: 3_600_000 } });
    target = { org_id: d.s.tenants.a.orgId, project_id: d.s.tenants.a.projectId };
  });
  after(async () => {
    await d?.close();
    for (const r of receivers) await r.close();
  });

  const ingestKicks = async (counts: Record<string, number>) => {
    const ts = new Date(d.s.clock.now() - 1_000).toISOString();
    const events = Object.entries(counts).flatMap(([source, n]) => Array.from({ length: n }, () => ({ ts, event: 'player.kick', source, severity: 'error' })));
    const res = await d.s.request('POST', '/datasets/game/ingest', { json: events });
    assert.equal(res.status, 200, res.text);
  };

  test('Owner at 1280 px: channel to a real receiver → test delivered → monitor from /alerts/new?q= with preview and field errors → fires → mute → history after "Send test notification"', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    await ingestKicks({ 'eu-1': 7, 'us-1': 2 });
    await d.member('alerts-owner@example.com', 'Owner');
    const { context, page, problems } = await d.context(widths.desktop);
    await d.signIn(page, 'alerts-owner@example.com', '/alerts');
    await titled(page, 'Alerts · opsplatform');
    await page.getByTestId('no-monitors').waitFor();
    await page.getByTestId('no-channels').waitFor();

    // A channel, typed key by key; the webhook's signing secret is shown once.
    await page.getByText('Add a channel').click();
    await page.getByLabel('Channel name').click();
    await page.keyboard.type('ops receiver');
    await page.getByLabel('Kind').selectOption('webhook');
    // The API's refusal of the URL is shown beside it, and goes once the URL is changed.
    await page.getByLabel('URL').click();
    await page.keyboard.type('ftp://127.0.0.1/hook');
    await page.getByRole('button', { name: 'Add channel' }).click();
    await page.getByTestId('url-error').filter({ hasText: 'not ftp:' }).waitFor();
    assert.equal(await page.getByLabel('URL').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('URL').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type(receiver.url, { delay: 10 });
    assert.equal(await page.getByTestId('url-error').count(), 0);
    await page.getByRole('button', { name: 'Add channel' }).click();
    assert.match(await page.getByTestId('signing-secret').inputValue(), /^whsec_/);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const card = page.getByRole('listitem', { name: 'Channel ops receiver' });
    await card.getByText(receiver.url).waitFor();

    // "Send test" reaches the receiver; the card's last deliveries show it delivered.
    await card.getByRole('button', { name: 'Send test' }).click();
    await receiver.waitFor(1);
    assert.equal(bodyOf(receiver, 0).status, 'test');
    await card.locator('.delivery[data-state="delivered"]').getByText('HTTP 200').waitFor();

    // The explorer's "Create monitor from this query" opens exactly this address.
    const q = 'event == "player.kick" AND severity >= error stats count() by source';
    await page.goto(`${d.url}/alerts/new?q=${encodeURIComponent(q)}`);
    await titled(page, 'Alerts · opsplatform');
    assert.equal(await page.getByLabel('Kind').inputValue(), 'threshold');
    assert.equal(await page.getByTestId('soql-input').textContent(), q);
    await page.getByLabel('Name').click();
    await page.keyboard.type('Kicks by source', { delay: 20 });
    await page.getByLabel('Threshold', { exact: true }).click();
    await page.keyboard.type('5');
    // The preview: eu-1's 7 kicks in one bin are over 5, us-1's 2 are not.
    await page.getByTestId('preview-firings').filter({ hasText: 'would have fired 1 time' }).waitFor();
    await page.locator('.firings li', { hasText: 'source=eu-1' }).waitFor();
    await page.getByTestId('preview-chart').locator('canvas').waitFor();

    // A refusal naming a field is shown beside that field.
    await page.getByLabel('Window').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('90x');
    await page.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByTestId('window-error').filter({ hasText: '"90x" is not a duration' }).waitFor();
    assert.equal(await page.getByLabel('Window').getAttribute('aria-invalid'), 'true');
    await page.getByLabel('Window').click();
    await page.keyboard.press('ControlOrMeta+A');
    // An hour: the kicks ingested at the start stay inside it however slow the machine is.
    await page.keyboard.type('1h');
    await page.getByRole('checkbox', { name: /ops receiver/ }).check();
    await d.screenshot(page, 'alerts-new');
    await page.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByRole('heading', { name: 'Kicks by source', level: 1 }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    assert.match(id, /^mon_/);
    await page.getByTestId('no-history').waitFor();

    // Evaluated: eu-1 fires and is notified at the receiver.
    await d.s.server.monitors.evaluateDue();
    await receiver.waitFor(2);
    assert.deepEqual([bodyOf(receiver, 1).status, bodyOf(receiver, 1).group, bodyOf(receiver, 1).value], ['firing', { source: 'eu-1' }, 7]);

    // The Alerts page: firing, its last value (the highest group's) and next evaluation, all from
    // the list's status: not one history request per row.
    const calls: string[] = [];
    const onRequest = (r: { url(): string }) => calls.push(new URL(r.url()).pathname);
    page.on('request', onRequest);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Alerts', exact: true }).click();
    const row = page.locator(`tr[data-monitor-id="${id}"]`);
    await row.getByTestId('monitor-state').filter({ hasText: 'firing' }).waitFor();
    assert.match((await row.getByTestId('last-value').textContent()) ?? '', /^7\b/);
    // Evaluated just now, every 1m: due again within a minute, at the monitor's own slot (docs/monitors.md
    // "Due times"), which may be the next few seconds and passed by the time the row is read.
    assert.match((await row.getByTestId('next-evaluation').textContent()) ?? '', /^(in [1-6]?\d s|due now)$/);
    await row.getByText(/^evaluated \d+ s ago$/).waitFor();
    page.off('request', onRequest);
    assert.ok(calls.includes('/v1/monitors'), calls.join(' '));
    assert.deepEqual(calls.filter((c) => c.includes('/history')), []);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'alerts');
    await row.getByLabel('Mute Kicks by source for').selectOption({ label: '8 hours' });
    await row.getByRole('button', { name: 'Mute' }).click();
    await row.getByTestId('monitor-state').filter({ hasText: 'muted' }).waitFor();
    // Muted, it still fires (silently), and says so.
    await row.getByText('firing, silently').waitFor();
    const muted = await d.s.request('GET', `/monitors/${id}`);
    const mutedFor = Date.parse(muted.body.muted_until) - Date.now();
    assert.ok(mutedFor > 7.9 * 3_600_000 && mutedFor <= 8 * 3_600_000, String(muted.body.muted_until));

    // Its page: "Send test notification" reaches the receiver; the history shows every attempt.
    await row.getByRole('link', { name: 'Kicks by source' }).click();
    await page.getByRole('heading', { name: 'Kicks by source', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Send test notification' }).click();
    await page.getByRole('status').filter({ hasText: 'Test notification stored for 1 channel' }).waitFor();
    await receiver.waitFor(3);
    assert.equal(bodyOf(receiver, 2).status, 'test');
    assert.equal(bodyOf(receiver, 2).monitor.id, id);
    const history = page.getByTestId('history');
    await history.locator('[data-type="notification"] .delivery[data-state="delivered"]', { hasText: 'test' }).getByText('attempt 1: HTTP 200').waitFor();
    await history.locator('[data-type="notification"]', { hasText: 'firing' }).getByText('to ops receiver').waitFor();
    await history.locator('[data-type="state_change"]', { hasText: 'source=eu-1: ok → firing, value 7' }).waitFor();
    // Its last match: the evaluation that fired it, as the API answers it.
    const matchedAt = (await d.s.request('GET', `/monitors/${id}`)).body.status.last_match_at as string;
    assert.ok(matchedAt);
    assert.equal(await page.getByTestId('last-match').locator('time').getAttribute('datetime'), matchedAt);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'alerts-monitor');

    // Unmuted from its page.
    await page.getByRole('button', { name: 'Unmute' }).click();
    await page.getByRole('button', { name: 'Mute', exact: true }).waitFor();
    assert.equal((await d.s.request('GET', `/monitors/${id}`)).body.muted_until, null);

    // Only the refusals provoked on purpose (the URL's and the window's 400) reached the console.
    assert.deepEqual(unexpected(problems), []);
    assert.ok(problems.length <= 2, problems.join('\n'));
    await context.close();
  });

  test('Developer at 390 px: a query typed key by key, a SOQL refusal at its position, a match monitor, edited, deleted after confirming', async () => {
    await d.member('alerts-dev@example.com', 'Developer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'alerts-dev@example.com', '/alerts/new');
    await titled(page, 'Alerts · opsplatform');
    await page.getByRole('heading', { name: 'New monitor' }).waitFor();
    await page.getByLabel('Name').click();
    await page.keyboard.type('Cheaters');
    // No `stats`: a match monitor; the kind follows the query as it is typed.
    await typeQuery(page, 'event:player.kick AND severity >= error', 20);
    assert.equal(await page.getByLabel('Kind').inputValue(), 'match');
    await typeQuery(page, ' stats count()');
    assert.equal(await page.getByLabel('Kind').inputValue(), 'threshold');
    for (let i = 0; i < ' stats count()'.length; i++) await page.keyboard.press('Backspace');
    assert.equal(await page.getByTestId('soql-input').textContent(), 'event:player.kick AND severity >= error');
    assert.equal(await page.getByLabel('Kind').inputValue(), 'match');

    // Chosen as threshold anyway: the API's soql_parse_error is shown at its position.
    await page.getByLabel('Kind').selectOption('threshold');
    await page.getByLabel('Threshold', { exact: true }).click();
    await page.keyboard.type('3');
    await page.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByTestId('q-error').filter({ hasText: 'needs a `stats` clause' }).waitFor();
    assert.match((await page.getByTestId('q-error').textContent()) ?? '', /at character 40 \(the end\)/);
    await page.getByTestId('soql-error-mark').waitFor();
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'alerts-new-error');

    await page.getByLabel('Kind').selectOption('match');
    await page.getByLabel('Group window').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('30s', { delay: 30 });
    await page.getByRole('button', { name: 'Create monitor' }).click();
    await page.getByRole('heading', { name: 'Cheaters', level: 1 }).waitFor();
    await page.getByText('matches within 30s go out together').waitFor();

    // Edit: the kind cannot change; the query typed on.
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit Cheaters' }).waitFor();
    assert.equal(await page.getByLabel('Kind').isDisabled(), true);
    await typeQuery(page, ' AND source:eu*', 15);
    await page.getByRole('button', { name: 'Save monitor' }).click();
    await page.getByRole('heading', { name: 'Cheaters', level: 1 }).waitFor();
    await page.locator('code.query', { hasText: 'event:player.kick AND severity >= error AND source:eu*' }).waitFor();
    const id = new URL(page.url()).pathname.split('/').pop()!;
    await page.getByTestId('last-match').getByText('never').waitFor();
    // A matching event: its page, read again, shows when it matched (the row's time, as the API answers it).
    await ingestKicks({ 'eu-7': 1 });
    const matched = await eventually(
      async () => (await d.s.request('GET', `/monitors/${id}`)).body.status.last_match_at as string | null,
      (at) => at !== null,
    );
    await page.reload();
    await page.getByRole('heading', { name: 'Cheaters', level: 1 }).waitFor();
    assert.equal(await page.getByTestId('last-match').locator('time').getAttribute('datetime'), matched);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'alerts-monitor');
    // The list's row says it too.
    await page.goto(`${d.url}/alerts`);
    const row = page.locator(`tr[data-monitor-id="${id}"]`);
    assert.equal(await row.getByTestId('last-match').locator('time').getAttribute('datetime'), matched);
    await row.getByRole('link', { name: 'Cheaters' }).click();
    await page.getByRole('heading', { name: 'Cheaters', level: 1 }).waitFor();

    // Delete asks first; Cancel keeps it, the second time it goes.
    await page.getByTestId('delete-monitor').click();
    const dialog = page.getByRole('dialog', { name: 'Delete the monitor “Cheaters”?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal((await d.s.request('GET', `/monitors/${id}`)).status, 200);
    await page.getByTestId('delete-monitor').click();
    await dialog.getByRole('button', { name: 'Delete monitor' }).click();
    await titled(page, 'Alerts · opsplatform');
    await page.getByRole('heading', { name: 'Monitors' }).waitFor();
    await page.getByTestId('monitors-table').or(page.getByTestId('no-monitors')).first().waitFor();
    assert.equal(await page.locator(`tr[data-monitor-id="${id}"]`).count(), 0);
    assert.equal((await d.s.request('GET', `/monitors/${id}`)).status, 404);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'alerts');

    // The 400s provoked on purpose (the save, and the preview of a query without stats) aside, nothing.
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test("past the plan's monitor cap the form says so, with the numbers and a link to Usage and plan", async () => {
    // Organisation B is on the free plan: 3 monitors.
    const b = d.s.tenants.b;
    for (let i = 0; i < 3; i++) {
      const res = await d.s.request('POST', '/monitors', { token: b.token, json: { name: `cap ${i}`, kind: 'match', q: 'event:x', channel_ids: [] } });
      assert.equal(res.status, 201, res.text);
    }
    await d.member('alerts-cap@example.com', 'Developer', b.orgId);
    const { context, page, problems } = await d.context(widths.desktop);
    // (Signed in first: the shell's sign-in keeps the path to return to, not its ?q=.)
    await d.signIn(page, 'alerts-cap@example.com', '/alerts');
    await page.goto(`${d.url}/alerts/new?q=${encodeURIComponent('event:player.kick')}`);
    await page.getByRole('heading', { name: 'New monitor' }).waitFor();
    assert.equal(await page.getByTestId('soql-input').textContent(), 'event:player.kick');
    assert.equal(await page.getByLabel('Kind').inputValue(), 'match');
    await page.getByLabel('Name').click();
    await page.keyboard.type('one too many', { delay: 5 });
    await page.getByRole('button', { name: 'Create monitor' }).click();
    const note = page.getByRole('alert').filter({ hasText: 'the plan allows 3 monitors' });
    await note.getByRole('link', { name: 'See usage and plan' }).waitFor();
    assert.match((await note.textContent()) ?? '', /Monitors: 3 of 3 used on your plan/);
    await d.screenshot(page, 'alerts-cap');
    assert.deepEqual(unexpected(problems), []);
    assert.deepEqual(problems, ['Failed to load resource: the server responded with a status of 402 (Payment Required)']);
    await context.close();
  });

  test('a Viewer sees monitors and channels without any write control, and the API refuses the writes', async () => {
    const channel = await d.s.request('POST', '/channels', { json: { name: 'viewer-visible', kind: 'slack', url: 'http://127.0.0.1:9/services/T000/B000/secretpart' } });
    assert.equal(channel.status, 201, channel.text);
    // Evaluated over a window without events: no group has a value (no data).
    const quiet = await d.s.request('POST', '/monitors', {
      json: { name: 'Quiet by source', kind: 'threshold', q: 'event == "never.seen" stats count() by source', window: '5m', every: '5m', condition: { op: '>', value: 0 }, channel_ids: [] },
    });
    assert.equal(quiet.status, 201, quiet.text);
    await d.s.server.monitors.evaluateDue();
    // Not evaluated yet.
    const monitor = await d.s.request('POST', '/monitors', {
      json: { name: 'Seen by viewers', kind: 'threshold', q: 'stats count()', window: '5m', condition: { op: '>', value: 1000 }, channel_ids: [channel.body.id] },
    });
    assert.equal(monitor.status, 201, monitor.text);
    await d.member('alerts-viewer@example.com', 'Viewer');
    for (const viewport of [widths.desktop, widths.phone]) {
      const { context, page, problems } = await d.context(viewport);
      await d.signIn(page, 'alerts-viewer@example.com', '/alerts');
      await titled(page, 'Alerts · opsplatform');
      const row = page.locator(`tr[data-monitor-id="${monitor.body.id}"]`);
      await row.waitFor();
      await row.getByTestId('monitor-state').filter({ hasText: 'not evaluated yet' }).waitFor();
      assert.equal(await row.getByTestId('next-evaluation').textContent(), 'due now');
      const quietRow = page.locator(`tr[data-monitor-id="${quiet.body.id}"]`);
      await quietRow.getByTestId('monitor-state').filter({ hasText: 'no data' }).waitFor();
      assert.match((await quietRow.getByTestId('last-value').textContent()) ?? '', /^no value/);
      // Its next evaluation falls in a slot of the next 5 minutes, which may already have come on
      // a slow machine by the second viewport: "due now" is then the right words.
      const nextAt = Date.parse((await d.s.request('GET', `/monitors/${quiet.body.id}`)).body.status.next_evaluation_at as string);
      const nextShown = (await quietRow.getByTestId('next-evaluation').textContent()) ?? '';
      assert.match(nextShown, nextAt > Date.now() + 2_000 ? /^in \d+ (s|min)$/ : /^(in \d+ s|due now)$/, `next evaluation at ${new Date(nextAt).toISOString()}`);
      const card = page.getByRole('listitem', { name: 'Channel viewer-visible' });
      // The Slack URL is a secret: masked.
      await card.getByText('http://127.0.0.1:9/****part').waitFor();
      assert.equal(await page.getByText('secretpart').count(), 0);
      for (const name of ['New monitor', 'Mute', 'Send test', 'Add channel']) {
        assert.equal(await page.getByRole('button', { name }).or(page.getByRole('link', { name })).count(), 0, name);
      }
      assert.equal(await page.getByText('Add a channel').count(), 0);
      await assertNoPageOverflow(page);
      await d.screenshot(page, 'alerts-viewer');

      await row.getByRole('link', { name: 'Seen by viewers' }).click();
      await page.getByRole('heading', { name: 'Seen by viewers', level: 1 }).waitFor();
      await page.getByTestId('no-history').waitFor();
      for (const name of ['Send test notification', 'Edit', 'Delete', 'Mute', 'Unmute']) {
        assert.equal(await page.getByRole('button', { name, exact: true }).or(page.getByRole('link', { name, exact: true })).count(), 0, name);
      }
      await page.goto(`${d.url}/alerts/new?q=${encodeURIComponent('stats count()')}`);
      await page.getByTestId('monitor-form-read-only').waitFor();
      assert.equal(await page.getByTestId('soql-input').count(), 0);

      if (viewport === widths.desktop) {
        const id = monitor.body.id as string;
        assert.equal(await withSessionToken(page, target, 'GET', `/v1/monitors/${id}`), 200);
        assert.equal(await withSessionToken(page, target, 'POST', '/v1/monitors', { name: 'x', kind: 'match', q: 'event:x', channel_ids: [] }), 403);
        assert.equal(await withSessionToken(page, target, 'PATCH', `/v1/monitors/${id}`, { muted_until: new Date(Date.now() + 3_600_000).toISOString() }), 403);
        assert.equal(await withSessionToken(page, target, 'POST', `/v1/monitors/${id}/test`), 403);
        assert.equal(await withSessionToken(page, target, 'DELETE', `/v1/monitors/${id}`), 403);
        assert.equal(await withSessionToken(page, target, 'POST', '/v1/channels', { name: 'x', kind: 'webhook', url: 'http://127.0.0.1:9/x' }), 403);
        assert.equal(await withSessionToken(page, target, 'POST', `/v1/channels/${channel.body.id}/test`), 403);
        assert.equal((await d.s.request('GET', `/monitors/${id}`)).body.muted_until, null);
      }
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }
  });
});
