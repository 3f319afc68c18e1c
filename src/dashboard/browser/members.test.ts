import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { assertNoPageOverflow, noBrowser, password, startDashboard, titled, unexpected, widths, type Dashboard } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

/** A call made in the page with the signed-in session: its own short-lived token on /v1, or the cookie on /dashboard/. */
async function asSession(page: Page, target: { org_id: string; project_id: string }, method: string, path: string, body?: unknown): Promise<number> {
  return page.evaluate(
    async ({ target, method, path, body }) => {
      const headers: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
      if (path.startsWith('/v1/')) {
        const exchanged = await fetch('/dashboard/session/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...target, mode: 'live' }) });
        headers.authorization = `Bearer ${((await exchanged.json()) as { token: string }).token}`;
      }
      const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return res.status;
    },
    { target, method, path, body },
  );
}

async function openMembers(page: Page, d: Dashboard): Promise<void> {
  await page.goto(`${d.url}/members`);
  await titled(page, 'Members · opsplatform');
  await page.getByTestId('members-table').waitFor();
}

describe('dashboard Members page in Chromium', needs(noBrowser), () => {
  let d: Dashboard;
  let target: { org_id: string; project_id: string };
  before(async () => {
    d = await startDashboard();
    target = { org_id: d.s.tenants.a.orgId, project_id: d.s.tenants.a.projectId };
  });
  after(() => d?.close());

  test('invite → link shown → the invitee sets a password from it and signs in → role changed → removed: their session ends', async () => {
    await d.member('members-owner@example.com', 'Owner');
    const owner = await d.context();
    await owner.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.s.apiUrl });
    await d.signIn(owner.page, 'members-owner@example.com', '/tokens');
    await owner.page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Members', exact: true }).click();
    await titled(owner.page, 'Members · opsplatform');
    await owner.page.locator('tr', { hasText: 'owner-a@example.com' }).waitFor();

    const form = owner.page.getByRole('form', { name: 'Invite a member' });
    await form.getByLabel('E-mail').fill('newbie@example.com');
    await form.getByLabel('Name (optional)').fill('Newbie');
    await form.getByLabel('Role').selectOption({ label: 'Viewer' });
    await form.getByRole('button', { name: 'Invite' }).click();
    const panel = owner.page.getByRole('region', { name: 'Password link' });
    await panel.getByRole('heading', { name: 'newbie@example.com is invited' }).waitFor();
    await panel.getByText('It works once').waitFor();
    const link = await owner.page.getByTestId('password-link-url').inputValue();
    assert.match(link, new RegExp(`^${d.url}/set-password#[A-Za-z0-9_-]{43}$`));
    await panel.getByRole('button', { name: 'Copy' }).click();
    await panel.getByText('Copied', { exact: true }).waitFor();
    assert.equal(await owner.page.evaluate(() => navigator.clipboard.readText()), link);
    const row = owner.page.locator('tr', { hasText: 'newbie@example.com' });
    await row.getByRole('cell', { name: 'Viewer', exact: true }).waitFor();
    await d.screenshot(owner.page, 'members-invited');
    await panel.getByRole('button', { name: 'Done' }).click();

    // The invitee, in a browser of their own: the link names their e-mail; a password, and
    // they are signed in with it (the link is gone from the address).
    const newbie = await d.context();
    await newbie.page.goto(link);
    assert.equal(await newbie.page.getByLabel('E-mail').inputValue(), 'newbie@example.com');
    await newbie.page.getByLabel('New password').pressSequentially(password);
    await newbie.page.getByLabel('The same again').pressSequentially(password);
    await newbie.page.getByRole('button', { name: 'Set password and sign in' }).click();
    await newbie.page.getByTestId('sign-out').waitFor();
    assert.equal(new URL(newbie.page.url()).hash, '');
    await openMembers(newbie.page, d);
    // A Viewer: no controls, and the API refuses the Viewer's session.
    await newbie.page.getByTestId('members-read-only').waitFor();
    assert.equal(await newbie.page.getByRole('form', { name: 'Invite a member' }).count(), 0);
    assert.equal(await newbie.page.getByRole('button', { name: /Change role|Remove|Password link/ }).count(), 0);
    assert.equal(await newbie.page.getByRole('columnheader', { name: 'Manage' }).count(), 0);
    await d.screenshot(newbie.page, 'members-viewer');
    const roles = (await d.s.request('GET', `/orgs/${target.org_id}/roles`, { token: d.s.tenants.a.token })).body.roles as Array<{ id: string; name: string }>;
    const roleId = (name: string) => roles.find((r) => r.name === name)!.id;
    const ownerId = d.s.tenants.a.userId;
    assert.equal(await asSession(newbie.page, target, 'POST', `/v1/orgs/${target.org_id}/members`, { email: 'by-viewer@example.com', roleId: roleId('Viewer') }), 403);
    assert.equal(await asSession(newbie.page, target, 'PATCH', `/v1/orgs/${target.org_id}/members/${ownerId}`, { roleId: roleId('Viewer') }), 403);
    assert.equal(await asSession(newbie.page, target, 'DELETE', `/v1/orgs/${target.org_id}/members/${ownerId}`), 403);
    assert.equal(await asSession(newbie.page, target, 'POST', '/dashboard/password-links', { org_id: target.org_id, user_id: ownerId }), 403);

    // The Owner makes them a Developer; their next page load has the Developer's rights.
    await row.getByRole('button', { name: 'Change role' }).click();
    const change = owner.page.getByRole('dialog', { name: 'Change the role of Newbie (newbie@example.com)' });
    await change.getByLabel('New role').selectOption({ label: 'Developer' });
    await change.getByRole('button', { name: 'Save role' }).click();
    await change.waitFor({ state: 'hidden' });
    await row.getByRole('cell', { name: 'Developer', exact: true }).waitFor();
    await owner.page.getByRole('status').filter({ hasText: 'newbie@example.com is now Developer.' }).waitFor();
    await newbie.page.goto(`${d.url}/tokens`);
    await newbie.page.getByRole('button', { name: 'Create token' }).waitFor();
    await openMembers(newbie.page, d);
    await newbie.page.getByTestId('members-read-only').waitFor();
    assert.equal(await newbie.page.getByRole('button', { name: /Change role|Remove|Password link/ }).count(), 0);

    // Removed: gone from the list, and their next page load goes to sign-in.
    await row.getByRole('button', { name: 'Remove' }).click();
    const remove = owner.page.getByRole('dialog', { name: 'Remove Newbie (newbie@example.com)?' });
    await remove.getByText('loses access to Org A at once').waitFor();
    await remove.getByRole('button', { name: 'Remove member' }).click();
    await row.waitFor({ state: 'detached' });
    await newbie.page.goto(`${d.url}/members`);
    await newbie.page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();

    // Invited again: they have a password, so no link unless a reset is asked for.
    await form.getByLabel('E-mail').fill('newbie@example.com');
    await form.getByLabel('Role').selectOption({ label: 'Viewer' });
    await form.getByRole('button', { name: 'Invite' }).click();
    await panel.getByText('They already have a password and sign in with it').waitFor();
    assert.equal(await owner.page.getByTestId('password-link-url').count(), 0);
    await panel.getByRole('button', { name: 'Make a password reset link' }).click();
    await panel.getByRole('heading', { name: 'New password link for newbie@example.com' }).waitFor();
    assert.notEqual(await owner.page.getByTestId('password-link-url').inputValue(), link);
    await panel.getByRole('button', { name: 'Done' }).click();

    assert.deepEqual(unexpected(owner.problems), []);
    assert.deepEqual(unexpected(newbie.problems), []);
    await owner.context.close();
    await newbie.context.close();
  });

  test("the owner rules' 409 is explained in words; an Admin gets no controls for Owners", async () => {
    await d.member('members-owner2@example.com', 'Owner');
    for (const viewport of [widths.desktop, widths.phone]) {
      const { context, page, problems } = await d.context(viewport);
      await d.signIn(page, 'members-owner2@example.com', '/members');
      await openMembers(page, d);
      // owner-a@example.com is the primary owner: neither removed nor demoted.
      const primary = page.locator('tr', { hasText: 'owner-a@example.com' });
      await primary.getByRole('button', { name: 'Remove' }).click();
      const remove = page.getByRole('dialog', { name: /^Remove .*owner-a@example.com/ });
      await remove.getByRole('button', { name: 'Remove member' }).click();
      const explained = remove.getByRole('alert');
      await explained.filter({ hasText: 'the primary owner cannot be removed' }).waitFor();
      assert.match((await explained.textContent()) ?? '', /An organisation always keeps its primary owner and at least one Owner.*Make another member Owner first.*opsctl owner transfer/);
      await assertNoPageOverflow(page);
      await d.screenshot(page, 'members-409');
      await remove.getByRole('button', { name: 'Cancel' }).click();
      await primary.getByRole('button', { name: 'Change role' }).click();
      const change = page.getByRole('dialog', { name: /^Change the role of .*owner-a@example.com/ });
      await change.getByLabel('New role').selectOption({ label: 'Admin' });
      await change.getByRole('button', { name: 'Save role' }).click();
      await change.getByRole('alert').filter({ hasText: 'the primary owner cannot be demoted' }).waitFor();
      await change.getByRole('button', { name: 'Cancel' }).click();
      await primary.getByRole('cell', { name: 'Owner', exact: true }).waitFor();
      await d.screenshot(page, 'members');
      assert.deepEqual(unexpected(problems), []);
      await context.close();
    }

    await d.member('members-admin@example.com', 'Admin');
    const devId = await d.member('members-dev@example.com', 'Developer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'members-admin@example.com', '/members');
    await openMembers(page, d);
    const ownerRow = page.locator('tr', { hasText: 'members-owner2@example.com' });
    await ownerRow.getByText('Only an Owner can change an Owner.').waitFor();
    assert.equal(await ownerRow.getByRole('button').count(), 0);
    // The Admin may manage the Developer, but not make anyone Owner.
    const devRow = page.locator(`tr[data-member-id="${devId}"]`);
    await devRow.getByRole('button', { name: 'Change role' }).click();
    const roleSelect = page.getByRole('dialog', { name: /^Change the role of/ }).getByLabel('New role');
    await roleSelect.locator('option').first().waitFor({ state: 'attached' });
    const options = await roleSelect.locator('option').allTextContents();
    assert.deepEqual(options, ['Admin', 'Developer (current)', 'Viewer']);
    await page.keyboard.press('Escape');
    assert.deepEqual(await page.getByRole('form', { name: 'Invite a member' }).getByLabel('Role').locator('option').allTextContents(), ['Admin', 'Developer', 'Viewer']);
    await assertNoPageOverflow(page);
    await d.screenshot(page, 'members-admin');
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });

  test('a Developer sees the members but no member-management controls; the API refuses them', async () => {
    await d.member('members-dev2@example.com', 'Developer');
    const { context, page, problems } = await d.context(widths.phone);
    await d.signIn(page, 'members-dev2@example.com', '/members');
    await openMembers(page, d);
    await page.getByTestId('members-read-only').waitFor();
    assert.equal(await page.getByRole('form', { name: 'Invite a member' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /Change role|Remove|Password link/ }).count(), 0);
    await page.locator('tr', { hasText: 'owner-a@example.com' }).waitFor();
    await assertNoPageOverflow(page);
    assert.equal(await asSession(page, target, 'POST', `/v1/orgs/${target.org_id}/members`, { email: 'by-dev@example.com', roleId: 'rol_x' }), 403);
    assert.equal(await asSession(page, target, 'DELETE', `/v1/orgs/${target.org_id}/members/${d.s.tenants.a.userId}`), 403);
    assert.deepEqual(unexpected(problems), []);
    await context.close();
  });
});
