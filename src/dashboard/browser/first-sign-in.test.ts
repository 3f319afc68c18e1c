// First sign-in as an operator does it: `opsctl init --json` on an empty installation, the
// server started on it (`opsctl serve`), and the printed set_password_url opened in Chromium.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { exited, freePort, opsctlArgs, serveProcess } from '../../test-support/test-process.js';
import { ensureWebAppBuilt, launchChromium, noBrowser, openContext, password, titled } from '../../test-support/dashboard/test-browser.js';
import { needs } from '../../test-support/ci.js';

/** `opsctl <args>` (compiled, as a shell runs it) on `env`; its one JSON object. */
function opsctlJson(args: string[], env: NodeJS.ProcessEnv): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, opsctlArgs(...args), { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`opsctl ${args.join(' ')} exited with ${code}: ${stderr}`));
      try {
        resolve(JSON.parse(stdout) as Record<string, unknown>);
      } catch {
        reject(new Error(`opsctl ${args.join(' ')} printed something other than one JSON object: ${stdout}`));
      }
    });
  });
}

describe('first sign-in in Chromium, from what opsctl init prints', needs(noBrowser), () => {
  let dataDir: string;
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  let url: string;
  let init: Record<string, unknown>;
  before(async () => {
    ensureWebAppBuilt();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ops-first-sign-in-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    // Embedded SQLite in a directory of its own (init needs an empty installation).
    const env: NodeJS.ProcessEnv = { ...process.env, OPS_DATA_DIR: dataDir, OPS_PUBLIC_URL: url, OPS_LOG_LEVEL: 'warn' };
    delete env.OPS_DATABASE_URL;
    init = await opsctlJson(['init', '--email', 'Lead@Studio.example', '--json'], env);
    server = await serveProcess(dataDir, port, { OPS_PUBLIC_URL: url, OPS_DATABASE_URL: '' });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await exited(server);
    }
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test('the link names the e-mail, setting the password signs the owner in; the spent link says so; the console stays empty', async () => {
    const link = String(init.set_password_url);
    assert.match(link, new RegExp(`^${url}/dashboard/set-password#[A-Za-z0-9_-]{43}$`));
    // init prints the owner's e-mail as it stored it (--email, lower-cased).
    const email = String(init.email);
    assert.equal(email, 'lead@studio.example');

    const { context, page, problems } = await openContext(browser!);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set your password' }).waitFor();
    assert.equal(await page.getByLabel('E-mail').inputValue(), email);
    await page.getByLabel('New password').pressSequentially(password);
    await page.getByLabel('The same again').pressSequentially(password);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    // Signed in at once, on the explorer, as the owner; the link is gone from the address.
    await page.getByTestId('sign-out').waitFor();
    await titled(page, 'Explorer · opsplatform');
    assert.equal(new URL(page.url()).pathname, '/dashboard/');
    assert.equal(new URL(page.url()).hash, '');
    assert.equal(await page.locator('.top .user').getAttribute('title'), email);
    assert.deepEqual(problems, []);

    // The spent link, opened again: said at once, with no form to fill in vain.
    const again = await openContext(browser!);
    await again.page.goto(link);
    await again.page.getByRole('alert').filter({ hasText: 'This link is unknown, already used or expired' }).waitFor();
    assert.equal(await again.page.getByLabel('New password').count(), 0);
    assert.deepEqual(again.problems, []);
    await again.context.close();

    // Signed out, the owner signs in with that e-mail and the new password.
    await page.getByTestId('sign-out').click();
    await page.getByRole('heading', { name: 'Sign in to opsplatform' }).waitFor();
    await page.getByLabel('E-mail').pressSequentially(email);
    await page.getByLabel('Password').pressSequentially(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('sign-out').waitFor();
    assert.deepEqual(problems, []);
    await context.close();
  });
});
