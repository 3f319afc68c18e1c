// The browser tests' harness: the real server (test-server.ts) serving the built dashboard,
// driven in Debian's Chromium by playwright-core (never a downloaded browser).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startTestServer, type TestServer, type TestServerOptions } from '../test-server.js';
import { dashboardService } from '../../dashboard/capability.js';
// @ts-expect-error a plain .mjs module shared with `npm start` (no types)
import { webAppStale } from '../../../scripts/web-app-stale.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const chromiumPath = process.env.OPS_TEST_CHROMIUM ?? '/usr/bin/chromium';
/** Why browser tests cannot run here (no Chromium), or undefined. Pass as node:test's `skip`. */
export const noBrowser = fs.existsSync(chromiumPath) ? undefined : `no Chromium at ${chromiumPath} (apt-get install chromium; .ci/run does)`;
export const password = 'correct horse battery staple';
/** Where screenshots go: test artifacts, not committed (.gitignore). */
export const artifactsDir = path.join(repoRoot, 'test-artifacts', 'dashboard');
export const widths = { desktop: { width: 1280, height: 860 }, phone: { width: 390, height: 844 } } as const;

/**
 * Builds dist/web when web/ changed since the last build (as `npm start` does). Test files run
 * in parallel processes: one builds under a lock directory while the others wait for it.
 */
export function ensureWebAppBuilt(): void {
  const stale = () => (webAppStale as (root: string) => boolean)(repoRoot);
  if (!stale()) return;
  const lock = path.join(repoRoot, 'dist', '.web-build-lock');
  fs.mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      // A lock older than two minutes belongs to a build that died: take it over.
      if (Date.now() > deadline || Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > 120_000) {
        fs.rmSync(lock, { recursive: true, force: true });
        continue;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    if (!stale()) return;
    const vite = spawnSync(process.execPath, [path.join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--config', path.join(repoRoot, 'web/vite.config.ts'), '--logLevel', 'warn'], { stdio: 'inherit' });
    assert.equal(vite.status, 0, 'vite build of the dashboard failed');
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export interface Dashboard {
  s: TestServer;
  browser: Browser;
  /** The dashboard's address: http://127.0.0.1:PORT/dashboard */
  url: string;
  /** A member of org A (or `orgId`) with the password set through a link; returns the user id. */
  member(email: string, role: string, orgId?: string): Promise<string>;
  /** A new browser context (own cookies) at `viewport`, collecting console errors and CSP violations. */
  context(viewport?: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page; problems: string[] }>;
  /**
   * Signs in and waits for the shell. `from` is the page opened first (below /dashboard): a
   * signed-out visitor is shown sign-in there and lands on that page after, not on the explorer.
   */
  signIn(page: Page, email: string, from?: string): Promise<void>;
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

/** Debian's Chromium, headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** A new browser context (own cookies) at `viewport`, collecting console errors (CSP violations included) and page errors. */
export async function openContext(browser: Browser, viewport: { width: number; height: number } = widths.desktop): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport, acceptDownloads: false });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

export async function startDashboard(options: TestServerOptions = {}): Promise<Dashboard> {
  ensureWebAppBuilt();
  const s = await startTestServer(options);
  const browser = await launchChromium();
  const url = `${s.apiUrl}/dashboard`;
  const dashboard: Dashboard = {
    s,
    browser,
    url,
    async member(email, role, orgId = s.tenants.a.orgId) {
      const { user_id } = await s.server.ctx.orgs.addMember({ orgId, email, role });
      const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(user_id);
      const res = await fetch(`${s.apiUrl}/dashboard/password`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: s.apiUrl },
        body: JSON.stringify({ link_token, password }),
      });
      assert.equal(res.status, 200, await res.text());
      return user_id;
    },
    context: (viewport = widths.desktop) => openContext(browser, viewport),
    async signIn(page, email, from = '/sign-in') {
      await page.goto(`${url}${from}`);
      await page.getByLabel('E-mail').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('sign-out').waitFor();
    },
    async screenshot(page, name) {
      fs.mkdirSync(artifactsDir, { recursive: true });
      const width = page.viewportSize()?.width ?? 0;
      await page.screenshot({ path: path.join(artifactsDir, `${name}-${width}.png`), fullPage: true });
    },
    async close() {
      await browser.close();
      await s.close();
    },
  };
  return dashboard;
}

/** No horizontal scrolling of the page itself at its width (tables scroll inside .table-wrap). */
export async function assertNoPageOverflow(page: Page): Promise<void> {
  const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
  assert.ok(scroll <= width, `page is ${scroll} px wide in a ${width} px window`);
}

/** Waits until the page's title is `title` (pages set it once they render). */
export async function titled(page: Page, title: string): Promise<void> {
  await page.waitForFunction((t) => document.title === t, title);
}

/** Problems a page logged, minus the API's own refusals a test provoked on purpose (4xx in the console). */
export function unexpected(problems: string[]): string[] {
  return problems.filter((p) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(p));
}
