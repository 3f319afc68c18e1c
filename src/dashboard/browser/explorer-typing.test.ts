// The explorer's SOQL editor typed into key by key, as people type (keystrokes the
// editor lost or moved), with its completions; in a file of its own so it runs beside the rest.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { noBrowser, startDashboard, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { clearEditor, completions, editorText, explorerOwner, rowCount, runQuery, seedExplorer, settled } from '../../test-support/dashboard/test-explorer.js';
import { needs } from '../../test-support/ci.js';

describe('explorer editor in Chromium: typing key by key, completions', needs(noBrowser), () => {
  let d: Dashboard;
  const now = Date.now();
  before(async () => {
    d = await startDashboard();
    await seedExplorer(d, now);
  });
  after(() => d?.close());

  test('typing key by key at 0, 20 and 60 ms a key keeps every character where it was typed, and runs exactly that', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    const issue = 'severity >= warn AND payload.map:dust';
    const matching = 'severity >= warn AND payload.region:us-east-1';
    const expected = Array.from({ length: 150 }, (_, i) => i).filter((i) => (i % 10 === 0 || i % 4 === 0) && i % 2 === 0).length;
    for (const delay of [0, 20, 60]) {
      // With the completion list open on the way: operators after the field, severities after
      // the operator, keywords and payload keys after a letter.
      await clearEditor(page);
      await page.keyboard.type('severity ', { delay });
      assert.deepEqual((await completions(page)).slice(0, 4), [':', '!:', '>=', '>'], `at ${delay} ms a key`);
      await page.keyboard.type('>= w', { delay });
      assert.deepEqual(await completions(page), ['warn']);
      await page.keyboard.type('arn AND p', { delay });
      assert.ok((await completions(page)).includes('payload.region'), (await completions(page)).join(' '));
      await page.keyboard.type('ayload.map:dust', { delay });
      assert.equal(await editorText(page), issue, `typed at ${delay} ms a key`);
      assert.deepEqual(await completions(page), []);
      await page.getByTestId('soql-input').press('Control+Enter');
      await settled(page, issue);
      assert.equal(new URL(page.url()).searchParams.get('q'), issue);
      assert.equal(await page.getByTestId('sent-query').textContent(), `ts >= now-1h AND (${issue})`);
      assert.equal(await rowCount(page), 0);
      await runQuery(page, matching, delay);
      assert.equal(await page.getByTestId('sent-query').textContent(), `ts >= now-1h AND (${matching})`);
      assert.equal(await rowCount(page), expected);
    }
    // Typing on after Ctrl+Enter, while that query runs: the run does not take the new keys back.
    await clearEditor(page);
    await page.keyboard.type('severity >= warn');
    await page.getByTestId('soql-input').press('Control+Enter');
    await page.keyboard.type(' AND source:srv-1');
    await settled(page, 'severity >= warn');
    assert.equal(await editorText(page), 'severity >= warn AND source:srv-1');
    await page.getByTestId('soql-input').press('Control+Enter');
    await settled(page, 'severity >= warn AND source:srv-1');
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('completions while typing key by key: chosen with the arrows and Enter, or a click; Escape closes; the console stays empty', async () => {
    const { context, page, problems } = await d.context();
    await d.signIn(page, explorerOwner);
    await settled(page);
    const editor = page.getByTestId('soql-input');
    assert.equal(await editor.getAttribute('aria-expanded'), 'false');
    await clearEditor(page);
    // Fields as the word begins; payload keys of the events shown, nested ones by their path.
    await page.keyboard.type('s');
    assert.deepEqual(await completions(page), ['stats', 'severity', 'source']);
    assert.equal(await editor.getAttribute('aria-expanded'), 'true');
    assert.equal(await editor.getAttribute('aria-activedescendant'), 'soql-completion-0');
    await page.keyboard.press('ArrowDown');
    assert.equal(await editor.getAttribute('aria-activedescendant'), 'soql-completion-1');
    await page.keyboard.press('Enter');
    assert.equal(await editorText(page), 'severity');
    await page.keyboard.type(' ');
    await page.keyboard.type('>=');
    await page.keyboard.type(' e');
    assert.deepEqual(await completions(page), ['error']);
    await page.keyboard.press('Tab');
    await page.keyboard.type(' AND p');
    assert.deepEqual(await completions(page), ['payload.`odd key`', 'payload.nested.map', 'payload.ping', 'payload.region']);
    await d.screenshot(page, 'explorer-completions');
    await page.keyboard.type('ayload.n');
    assert.deepEqual(await completions(page), ['payload.nested.map']);
    // A click takes an option too (the editor keeps the focus).
    await page.locator('.soql-editor [role=option]', { hasText: 'payload.nested.map' }).click();
    await page.keyboard.type(' ');
    assert.deepEqual(await completions(page), [':', '!:', '>=', '>', '<=', '<', '==', '!=', 'exists', 'in (']);
    await page.keyboard.press('Escape');
    assert.deepEqual(await completions(page), []);
    assert.equal(await editor.getAttribute('aria-expanded'), 'false');
    await page.keyboard.press('Backspace');
    await page.keyboard.type(':map-2 AND d');
    assert.deepEqual(await completions(page), ['dataset']);
    await page.keyboard.type('ataset:');
    assert.deepEqual(await completions(page), ['game']);
    await page.keyboard.press('Enter');
    const q = 'severity >= error AND payload.nested.map:map-2 AND dataset:game';
    assert.equal(await editorText(page), q);
    await editor.press('Control+Enter');
    await settled(page, q);
    const expected = Array.from({ length: 150 }, (_, i) => i).filter((i) => i % 10 === 0 && i % 4 === 2).length;
    assert.equal(expected, 7);
    assert.equal(await rowCount(page), expected);
    // Ctrl+Space opens the list where typing did not; running the query closes it.
    await clearEditor(page);
    await page.keyboard.type('dataset:game ');
    assert.deepEqual(await completions(page), []);
    await editor.press('Control+Space');
    assert.deepEqual((await completions(page)).slice(0, 6), ['AND', 'OR', 'NOT', 'group by', 'stats', 'ts']);
    await editor.press('Control+Enter');
    await settled(page, 'dataset:game ');
    assert.deepEqual(await completions(page), []);
    // Stats functions after `stats`.
    await clearEditor(page);
    await page.keyboard.type('stats co', { delay: 20 });
    assert.deepEqual(await completions(page), ['count(', 'count_distinct(']);
    await page.keyboard.press('Enter');
    await page.keyboard.type(') by source', { delay: 20 });
    assert.equal(await editorText(page), 'stats count() by source');
    await editor.press('Control+Enter');
    await settled(page, 'stats count() by source');
    await page.getByTestId('aggregate-table').waitFor();
    // Typing over a selection (select all, type the next query), which Chromium alone would do
    // with a style attribute the CSP refuses.
    await editor.press('Control+a');
    await page.keyboard.type('severity >= warn', { delay: 20 });
    assert.equal(await editorText(page), 'severity >= warn');
    await editor.press('Control+Enter');
    await settled(page, 'severity >= warn');
    // No inline style, no error, from the first load on (the sign-in page's included).
    assert.deepEqual(problems, []);
    await context.close();
  });

});
