import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { assertNoPageOverflow, noBrowser, password, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { gif, mp4, pdf, png, sized } from '../../test-support/media/test-files.js';
import { needs } from '../../test-support/ci.js';

interface Dropped {
  name: string;
  type: string;
  bytes: Buffer;
}

/** Drops files on the upload zone as a person dragging them from the desktop would (a DataTransfer built in the page). */
async function drop(page: Page, files: Dropped[]): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    (list) => {
      const dt = new DataTransfer();
      for (const f of list) {
        const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name, { type: f.type }));
      }
      return dt;
    },
    files.map((f) => ({ name: f.name, type: f.type, base64: f.bytes.toString('base64') })),
  );
  const zone = page.getByTestId('media-drop');
  await zone.dispatchEvent('dragenter', { dataTransfer });
  await zone.dispatchEvent('dragover', { dataTransfer });
  await zone.dispatchEvent('drop', { dataTransfer });
}

/**
 * Signs in from the Media page's address (sign-in?next=/media), so the test lands on Media
 * itself and its console holds only what this page and the shell logged.
 */
async function signInTo(page: Page, url: string, email: string, at = '/media'): Promise<void> {
  await page.goto(`${url}/media`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('sign-out').waitFor();
  await page.getByRole('heading', { name: 'Media', exact: true, level: 1 }).waitFor();
  // The sign-in page keeps the path, not the query: a filtered address is opened after.
  if (at !== '/media') await page.goto(`${url}${at}`);
}

const grid = (page: Page) => page.getByRole('list', { name: 'Files', exact: true });
const deletedGrid = (page: Page) => page.getByRole('list', { name: 'Recently deleted files' });
const card = (page: Page, name: string) => grid(page).getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
const upload = (page: Page, name: string) => page.getByTestId('upload').filter({ hasText: name });

describe('dashboard Media page in Chromium', needs(noBrowser), () => {
  let d: Dashboard;
  let plansDir: string;
  before(async () => {
    // Organisation B is on the free plan: here a tiny one (3 kB per file, 5 kB of storage), so
    // the size and quota refusals are the server's real answers.
    plansDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-media-plans-'));
    const plansFile = path.join(plansDir, 'plans.json');
    fs.writeFileSync(
      plansFile,
      JSON.stringify({ plans: { free: { max_file_bytes: 3000, storage_bytes: 5000, datasets: 3, retention_days: 7, live_tail: false, events_month: 1000, queries_month: 1000 } } }),
    );
    d = await startDashboard({ env: { OPS_PLANS_FILE: plansFile } });
  });
  after(async () => {
    await d?.close();
    fs.rmSync(plansDir, { recursive: true, force: true });
  });

  /** Uploads through the API (org A's all-scopes token), as seed data. */
  async function seed(name: string, type: string, bytes: Buffer, meta: { folder?: string; tags?: string[] } = {}): Promise<{ id: string; url: string }> {
    const form = new FormData();
    if (meta.folder) form.append('folder', meta.folder);
    for (const t of meta.tags ?? []) form.append('tags', t);
    form.append('file', new Blob([new Uint8Array(bytes)], { type }), name);
    const res = await d.s.request('POST', '/media', { body: form });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }

  test('a Developer drops an image: its bar completes, the thumbnail appears, its URL serves it, Copy URL copies it', async () => {
    await d.member('media-dev@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(d.url).origin });
    await signInTo(page, d.url, 'media-dev@example.com');
    await titled(page, 'Media · opsplatform');
    await page.getByLabel('Into folder').fill('brand');
    await page.getByLabel('Tags (comma-separated)').fill('logo, red');
    await drop(page, [{ name: 'red.png', type: 'image/png', bytes: png() }]);

    const bar = page.getByRole('progressbar', { name: 'Upload of red.png' });
    await upload(page, 'red.png').getByText('Uploaded').waitFor();
    assert.equal(await bar.getAttribute('value'), '100');
    assert.equal(await bar.getAttribute('max'), '100');

    const image = card(page, 'red.png').getByRole('img', { name: 'red.png' });
    await image.waitFor();
    await page.waitForFunction((img) => img instanceof HTMLImageElement && img.complete && img.naturalWidth === 1, await image.elementHandle());
    const url = await card(page, 'red.png').getByRole('link', { name: /red\.png/ }).first().getAttribute('href');
    assert.ok(url?.startsWith(d.s.cdnUrl), `${url} is on the delivery listener ${d.s.cdnUrl}`);
    await card(page, 'red.png').getByText('brand').waitFor();
    await card(page, 'red.png').getByText('#logo').waitFor();

    // Opening the URL (as the thumbnail's link does, in a new tab): 200 with the image's type.
    const tab = await context.newPage();
    const opened = await tab.goto(url!);
    assert.equal(opened?.status(), 200);
    assert.equal(opened?.headers()['content-type'], 'image/png');
    assert.deepEqual(Buffer.from((await opened?.body()) ?? []), png());
    await tab.close();

    const copy = card(page, 'red.png').getByRole('button', { name: 'Copy URL of red.png' });
    await copy.click();
    await card(page, 'red.png').getByRole('button', { name: 'Copy URL of red.png' }).filter({ hasText: 'Copied' }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor({ state: 'attached' });
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url);

    // A fresh load finds it in the list (GET /v1/media), not only in the page's memory.
    await page.reload();
    await card(page, 'red.png').getByRole('img', { name: 'red.png' }).waitFor();
    await d.screenshot(page, 'media');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('folder and tag filters ask the server; a tag or folder on a card filters too; "load more" follows the cursor', async () => {
    await seed('cat.gif', 'image/gif', gif(), { folder: 'animals', tags: ['cute'] });
    await seed('manual.pdf', 'application/pdf', pdf(), { folder: 'docs', tags: ['cute', 'print'] });
    await seed('clip.mp4', 'video/mp4', mp4(), { folder: 'docs' });
    for (let i = 1; i <= 26; i++) await seed(`bulk-${String(i).padStart(2, '0')}.png`, 'image/png', png(), { folder: 'bulk' });
    await d.member('media-filter@example.com', 'Developer');
    const { context, page, problems } = await d.context();
    await signInTo(page, d.url, 'media-filter@example.com');
    await card(page, 'bulk-26.png').waitFor();

    const filters = page.getByRole('search', { name: 'Filter files' });
    await filters.getByLabel('Folder').fill('docs');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\/dashboard\/media\?folder=docs$/);
    await card(page, 'manual.pdf').getByText(/^PDF/).waitFor();
    await card(page, 'clip.mp4').getByText(/^Video/).waitFor();
    assert.equal(await grid(page).getByRole('listitem').count(), 2);
    await d.screenshot(page, 'media-filtered');

    await page.getByRole('link', { name: 'Clear filters' }).click();
    await page.waitForURL(/\/dashboard\/media$/);
    await filters.getByLabel('Tag').fill('cute');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/\?tag=cute$/);
    await card(page, 'cat.gif').waitFor();
    await card(page, 'manual.pdf').waitFor();
    assert.equal(await grid(page).getByRole('listitem').count(), 2);

    // Both filters at once: the folder link on a card, then the tag.
    await filters.getByLabel('Folder').fill('animals');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\?folder=animals&tag=cute$/);
    await page.getByText('1 file in folder “animals” and tagged “cute”').waitFor();
    await card(page, 'cat.gif').getByRole('link', { name: '#cute' }).click();
    await page.waitForURL(/\/media\?tag=cute$/);
    await card(page, 'manual.pdf').waitFor();

    await card(page, 'manual.pdf').getByRole('link', { name: /docs/ }).click();
    await page.waitForURL(/\?folder=docs$/);
    await card(page, 'clip.mp4').waitFor();

    // Pages of 24: the 26 files of folder bulk come in two.
    await page.goto(`${d.url}/media?folder=bulk`);
    await card(page, 'bulk-26.png').waitFor();
    await page.getByText('24+ files in folder “bulk”').waitFor();
    assert.equal(await grid(page).getByRole('listitem').count(), 24);
    await page.getByRole('button', { name: 'Load more' }).click();
    await card(page, 'bulk-01.png').waitFor();
    assert.equal(await grid(page).getByRole('listitem').count(), 26);
    await page.getByText('26 files in folder “bulk”').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0);

    await page.goto(`${d.url}/media?folder=nothing-here`);
    await page.getByText('No files yet in folder “nothing-here”.').waitFor();
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('delete asks first; the file leaves the grid for "Recently deleted", its URL still serving; restore brings it back', async () => {
    const file = await seed('gone.png', 'image/png', png(), { folder: 'trash-test' });
    await d.member('media-del@example.com', 'Developer');
    for (const viewport of [widths.desktop, widths.phone]) {
      const { context, page, problems } = await d.context(viewport);
      await signInTo(page, d.url, 'media-del@example.com', '/media?folder=trash-test');
      await card(page, 'gone.png').waitFor();
      if (viewport === widths.phone) await assertNoPageOverflow(page);

      // Cancel keeps it.
      await card(page, 'gone.png').getByRole('button', { name: 'Delete' }).click();
      const dialog = page.getByRole('dialog', { name: 'Delete “gone.png”?' });
      await dialog.getByText('Its URL keeps working for 30 days').waitFor();
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(await card(page, 'gone.png').count(), 1);

      await card(page, 'gone.png').getByRole('button', { name: 'Delete' }).click();
      await dialog.getByRole('button', { name: 'Delete' }).click();
      await card(page, 'gone.png').waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: 'Deleted “gone.png”' }).waitFor();
      const active = await d.s.request('GET', '/media?folder=trash-test');
      assert.deepEqual(active.body.files, []);
      assert.equal((await fetch(file.url)).status, 200, 'the URL keeps working in the window');

      await page.getByRole('navigation', { name: 'Media views' }).getByRole('link', { name: 'Recently deleted' }).click();
      await page.waitForURL(/view=deleted/);
      await titled(page, 'Recently deleted · Media · opsplatform');
      const deletedCard = deletedGrid(page).getByRole('listitem').filter({ hasText: 'gone.png' });
      await deletedCard.getByText('Removed for good').waitFor();
      await deletedCard.getByRole('img', { name: 'gone.png' }).waitFor();
      await d.screenshot(page, 'media-deleted');
      if (viewport === widths.phone) await assertNoPageOverflow(page);

      await deletedCard.getByRole('button', { name: 'Restore gone.png' }).click();
      await deletedCard.waitFor({ state: 'detached' });
      await page.getByRole('status').filter({ hasText: 'Restored “gone.png”' }).waitFor();
      await page.getByRole('navigation', { name: 'Media views' }).getByRole('link', { name: 'Files' }).click();
      await card(page, 'gone.png').waitFor();
      const back = await fetch(file.url);
      assert.equal(back.status, 200);
      assert.equal(back.headers.get('content-type'), 'image/png');
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }
  });

  test('a Viewer sees the files but no upload, delete or restore controls, and the API refuses them for the Viewer\'s token', async () => {
    const kept = await seed('seen.gif', 'image/gif', gif(), { folder: 'viewer-test' });
    const removed = await seed('removed.gif', 'image/gif', gif(), { folder: 'viewer-test' });
    assert.equal((await d.s.request('DELETE', `/media/${removed.id}`)).status, 200);
    await d.member('media-viewer@example.com', 'Viewer');
    for (const viewport of [widths.desktop, widths.phone]) {
      const { context, page, problems } = await d.context(viewport);
      await signInTo(page, d.url, 'media-viewer@example.com', '/media?folder=viewer-test');
      await card(page, 'seen.gif').getByRole('img', { name: 'seen.gif' }).waitFor();
      assert.equal(await page.getByTestId('media-drop').count(), 0);
      assert.equal(await page.getByRole('button', { name: /Choose files/ }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
      await card(page, 'seen.gif').getByRole('button', { name: 'Copy URL of seen.gif' }).waitFor();
      await d.screenshot(page, 'media-viewer');
      await page.getByRole('link', { name: 'Recently deleted' }).click();
      await deletedGrid(page).getByRole('listitem').filter({ hasText: 'removed.gif' }).waitFor();
      assert.equal(await page.getByRole('button', { name: /Restore/ }).count(), 0);
      if (viewport === widths.phone) await assertNoPageOverflow(page);

      const target = { org_id: d.s.tenants.a.orgId, project_id: d.s.tenants.a.projectId, mode: 'live' };
      const answers = await page.evaluate(
        async ({ target, kept, removed }) => {
          const session = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(target) });
          const { token, scopes } = (await session.json()) as { token: string; scopes: string[] };
          const authorization = `Bearer ${token}`;
          const form = new FormData();
          form.append('file', new File([Uint8Array.from(atob('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw=='), (c) => c.charCodeAt(0))], 'x.gif', { type: 'image/gif' }));
          const up = await fetch('/v1/media', { method: 'POST', headers: { authorization }, body: form });
          const del = await fetch(`/v1/media/${kept}`, { method: 'DELETE', headers: { authorization } });
          const restore = await fetch(`/v1/media/${removed}/restore`, { method: 'POST', headers: { authorization } });
          const list = await fetch('/v1/media?deleted=true', { headers: { authorization } });
          return { scopes, upload: up.status, code: ((await up.json()) as { error: { code: string } }).error.code, delete: del.status, restore: restore.status, list: list.status };
        },
        { target, kept: kept.id, removed: removed.id },
      );
      assert.deepEqual(answers.scopes.filter((s) => s.startsWith('media:')), ['media:read']);
      assert.deepEqual({ upload: answers.upload, code: answers.code, delete: answers.delete, restore: answers.restore, list: answers.list }, { upload: 403, code: 'forbidden', delete: 403, restore: 403, list: 200 });
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }
  });

  test('several files at once, each with its own bar: refusals (type, size, quota) are explained in words, the others go through', async () => {
    // A member of organisation B, whose (tiny) free plan allows 3 kB per file and 5 kB in all.
    await d.member('media-small@example.com', 'Developer', d.s.tenants.b.orgId);
    for (const viewport of [widths.phone, widths.desktop]) {
      const { context, page, problems } = await d.context(viewport);
      await signInTo(page, d.url, 'media-small@example.com');
      await titled(page, 'Media · opsplatform');
      if (viewport === widths.phone) {
        // The file picker by keyboard: focus the button, press Enter, choose two files.
        const chooser = page.waitForEvent('filechooser');
        await page.getByRole('button', { name: 'Choose files…' }).focus();
        await page.keyboard.press('Enter');
        await (
          await chooser
        ).setFiles([
          { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello, not a picture') },
          { name: 'ok.gif', mimeType: 'image/gif', buffer: gif() },
        ]);
        await upload(page, 'ok.gif').getByText('Uploaded').waitFor();
        const refused = upload(page, 'notes.txt');
        await refused.getByText('Failed').waitFor();
        await refused.getByRole('alert').filter({ hasText: 'This kind of file cannot be uploaded: its type is text/plain. Supported are PNG, JPEG, GIF or WebP images' }).waitFor();
        await card(page, 'ok.gif').waitFor();
        assert.equal(await card(page, 'notes.txt').count(), 0);
        await assertNoPageOverflow(page);
        await d.screenshot(page, 'media-upload-errors');
      } else {
        // Dropped together: a PNG whose bytes are text and one over the 3 KB file limit.
        await drop(page, [
          { name: 'fake.png', type: 'image/png', bytes: Buffer.from('just some text') },
          { name: 'big.png', type: 'image/png', bytes: sized('image/png', 4000) },
        ]);
        await upload(page, 'fake.png').getByRole('alert').filter({ hasText: 'it says image/png but its contents are not a file of any supported type' }).waitFor();
        await upload(page, 'big.png').getByRole('alert').filter({ hasText: 'Too large: this file is 4 KB and the most allowed for it is 3 KB' }).waitFor();
        await upload(page, 'big.png').getByRole('alert').filter({ hasText: 'free plan' }).waitFor();
        // 2.5 KB fits; then 2.9 KB more passes the file limit but not the 5 KB of storage.
        await drop(page, [{ name: 'fits.png', type: 'image/png', bytes: sized('image/png', 2500) }]);
        await upload(page, 'fits.png').getByText('Uploaded').waitFor();
        await drop(page, [{ name: 'more.png', type: 'image/png', bytes: sized('image/png', 2900) }]);
        const quota = upload(page, 'more.png').getByRole('alert');
        await quota.filter({ hasText: 'Not enough storage left on the free plan: 2.5 KB of 5 KB used, and this file needs 2.9 KB.' }).waitFor();
        assert.equal(await card(page, 'fits.png').count(), 1);
        for (const name of ['fake.png', 'big.png', 'more.png']) assert.equal(await card(page, name).count(), 0);
        await d.screenshot(page, 'media-upload-errors');
        await page.getByRole('button', { name: 'Clear finished uploads' }).click();
        assert.equal(await page.getByTestId('upload').count(), 0);
      }
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }
  });
});
