// The explorer's browser tests' helpers and data, shared by explorer*.test.ts (split so the
// files run side by side: one file of them took 70 s of the suite's wall time).
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { Dashboard } from './test-browser.js';

export const minute = 60_000;

/** The editor's text (the placeholder shows when it is empty). */
export async function editorText(page: Page): Promise<string> {
  return page.getByTestId('soql-input').evaluate((el) => (el.querySelector('.cm-placeholder') ? '' : (el.textContent ?? '')));
}

/** Empties the editor as a person does: click, select all, delete. */
export async function clearEditor(page: Page): Promise<void> {
  const editor = page.getByTestId('soql-input');
  await editor.click();
  await editor.press('Control+a');
  await editor.press('Backspace');
}

/**
 * Types `q` into the editor key by key (at machine speed unless `delay` is given, in ms a key),
 * checks the editor holds exactly that, runs it with Ctrl+Enter and waits for its answer and
 * histogram. Never in one step (fill, insertText): that hid keystrokes the editor lost.
 */
export async function runQuery(page: Page, q: string, delay = 0): Promise<void> {
  await clearEditor(page);
  await page.keyboard.type(q, { delay });
  assert.equal(await editorText(page), q, `typed at ${delay} ms a key`);
  await page.getByTestId('soql-input').press('Control+Enter');
  await settled(page, q);
}

/** The completions offered now (label and kind), or [] when the list is closed. */
export async function completions(page: Page): Promise<string[]> {
  return page.locator('.soql-editor [data-testid=soql-completions] [role=option] .label').allTextContents();
}

/** Waits until the page shows the answer (and histogram) of `q`, by default the URL's. */
export async function settled(page: Page, q?: string): Promise<void> {
  await page.waitForFunction((wanted) => {
    const results = document.querySelector('[data-testid=results]');
    const params = new URLSearchParams(location.search);
    const current = wanted ?? params.get('q') ?? '';
    const range = params.get('range') ?? '1h';
    const rangeKey = new URLSearchParams(range === 'custom' ? { range, from: params.get('from') ?? '', to: params.get('to') ?? '' } : { range }).toString();
    return (
      results !== null &&
      (results.getAttribute('data-q') ?? '') === current &&
      results.getAttribute('data-range') === rangeKey &&
      ['done', 'error'].includes(results.getAttribute('data-status') ?? '')
    );
  }, q);
}

export const rowCount = (page: Page) => page.locator('[data-testid=events] .event').count();


/** The member every explorer test signs in as. */
export const explorerOwner = 'explorer-owner@example.com';

/** 150 events over the 50 minutes before `now` (a page of 100 and a second one), and the member. */
export async function seedExplorer(d: Dashboard, now: number): Promise<void> {
  // 150 events over the last 50 minutes: a page of 100 and a second one.
  const events = Array.from({ length: 150 }, (_, i) => ({
    ts: new Date(now - 30_000 - i * 20_000).toISOString(),
    severity: i % 10 === 0 ? 'error' : i % 4 === 0 ? 'warn' : 'info',
    event: i % 2 ? 'player.join' : 'match.start',
    source: `srv-${i % 3}`,
    actor: `player-${i % 7}`,
    message: `event number ${i}`,
    payload: { region: i % 2 ? 'eu-west-1' : 'us-east-1', ping: 10 + i, 'odd key': i === 0 ? 'say "hi" \\ bye' : 'plain', nested: { map: `map-${i % 4}` } },
  }));
  const res = await d.s.request('POST', '/datasets/game/ingest', { json: events });
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.ingested, 150);
  await d.member(explorerOwner, 'Owner');
}
