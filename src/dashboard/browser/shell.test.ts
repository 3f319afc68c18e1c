import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { noBrowser, password, startDashboard, titled, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

describe('dashboard shell in Chromium: sign-in, switcher, sign-out', needs(noBrowser), () => {
  let d: Dashboard;
  before(async () => {
    d = await startDashboard();
  });
  after(() => d?.close());

  test('a signed-out visitor is sent to sign-in; signs in; sees the pages; signs out and every page refuses', async () => {
    await d.member('owner-shell@example.com', 'Owner');
    const { context, page, problems } = await d.context();
    await page.goto(`${d.url}/media`);
    await page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();
    assert.match(page.url(), /\/dashboard\/sign-in\?next=%2Fmedia$/);
    // Asking who is signed in is no error when nobody is: the console is empty from the first load.
    assert.deepEqual(problems, []);
    await page.getByLabel('E-mail').pressSequentially('owner-shell@example.com');
    await page.getByLabel('Password').pressSequentially('wrong password!!');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'wrong e-mail or password' }).waitFor();
    // The refused sign-in is the one error (the browser logs the 401 it provoked).
    assert.deepEqual(problems, ['Failed to load resource: the server responded with a status of 401 (Unauthorized)']);
    problems.length = 0;
    await d.signIn(page, 'owner-shell@example.com');
    for (const name of ['Explorer', 'Datasets', 'Media', 'Tokens', 'Members', 'Usage']) {
      await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();
      await titled(page, `${name} · opsplatform`);
    }
    await page.getByTestId('sign-out').click();
    await page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();
    for (const path of ['/', '/media', '/tokens', '/members', '/usage', '/datasets']) {
      await page.goto(`${d.url}${path}`);
      await page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();
    }
    assert.deepEqual(problems, []);
    await context.close();
  });

  test("a link with a query (a notification's explorer link, a monitor form) survives signing in", async () => {
    await d.member('linked@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    const q = 'severity >= error AND source:"eu 1"';
    await page.goto(`${d.url}/alerts/new?q=${encodeURIComponent(q)}`);
    await page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();
    await page.getByLabel('E-mail').pressSequentially('linked@example.com');
    await page.getByLabel('Password').pressSequentially(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('sign-out').waitFor();
    await page.waitForURL((u) => u.pathname === '/dashboard/alerts/new');
    assert.equal(new URL(page.url()).searchParams.get('q'), q);
    assert.deepEqual(problems, []);
    await context.close();
  });

  test('the switcher persists the project and mode per user, across sign-ins', async () => {
    await d.member('switch@example.com', 'Developer');
    const { context, page } = await d.context(widths.phone);
    await d.signIn(page, 'switch@example.com');
    await page.getByRole('button', { name: 'Menu' }).waitFor();
    await page.getByLabel('Mode').selectOption('test');
    await page.getByText('Test mode: you see the project').waitFor();
    await context.close();
    const again = await d.context();
    await d.signIn(again.page, 'switch@example.com');
    assert.equal(await again.page.getByLabel('Mode').inputValue(), 'test');
    await again.context.close();
  });
});
