// Test support for the dashboard's tests: a browser's session and a member who can sign in.
import assert from 'node:assert/strict';
import type { TestResponse, TestServer } from '../test-server.js';
import { dashboardService } from '../../dashboard/capability.js';

/** The password every member made by `member` has. */
export const password = 'correct horse battery staple';

/** The dashboard as a browser on the server's own origin uses it: cookie jar of one session, Origin on every request. */
export class Browser {
  cookie: string | undefined;
  lastSetCookie: string | undefined;
  constructor(
    private readonly s: TestServer,
    private readonly origin: string | null = s.apiUrl,
  ) {}

  async request(method: string, path: string, json?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> {
    const all: Record<string, string> = { ...headers };
    if (this.origin) all.origin ??= this.origin;
    if (this.cookie) all.cookie ??= this.cookie;
    const res = await this.s.request(method, `${this.s.apiUrl}${path}`, { token: null, json, headers: all });
    const set = res.headers.getSetCookie();
    if (set.length) {
      this.lastSetCookie = set[0];
      const [pair] = set[0]!.split(';');
      this.cookie = pair!.endsWith('=') ? undefined : pair;
    }
    return res;
  }

  async signIn(email: string, secret = password): Promise<TestResponse> {
    return this.request('POST', '/dashboard/session', { email, password: secret });
  }

  async token(target: { org_id: string; project_id: string; mode?: 'live' | 'test' }): Promise<TestResponse> {
    return this.request('POST', '/dashboard/session/token', { mode: 'live', ...target });
  }
}

/** A member of org A (by default) with a password set through a link. */
export async function member(s: TestServer, email: string, role: string, orgId = s.tenants.a.orgId): Promise<string> {
  const { user_id } = await s.server.ctx.orgs.addMember({ orgId, email, role });
  const { link_token } = await dashboardService(s.server.ctx).issuePasswordLink(user_id);
  const res = await new Browser(s).request('POST', '/dashboard/password', { link_token, password });
  assert.equal(res.status, 200, res.text);
  return user_id;
}

/** A member of org A signed in, and a session token of project A (live) with their role's scopes. */
export async function signedIn(s: TestServer, email: string, role: string): Promise<{ userId: string; browser: Browser; token: string }> {
  const userId = await member(s, email, role);
  const browser = new Browser(s);
  const signIn = await browser.signIn(email);
  assert.equal(signIn.status, 200, signIn.text);
  const exchanged = await browser.token({ org_id: s.tenants.a.orgId, project_id: s.tenants.a.projectId });
  assert.equal(exchanged.status, 200, exchanged.text);
  return { userId, browser, token: exchanged.body.token as string };
}
