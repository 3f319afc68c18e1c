// E-mail domain verification by DNS TXT record (DECISIONS.md §22, docs/sso.md "Verify your
// domains") over real HTTP, the server's resolver pointed at a loopback DNS server the test fills.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Migrator, sql } from 'kysely';
import { startTestServer, type TestServer } from '../test-support/test-server.js';
import { migrations } from '../stores/metadata/migrations/index.js';
import { Browser, signedIn } from '../test-support/dashboard/test-session.js';
import { startTestIssuer, type TestIssuer } from '../test-support/sso/test-issuer.js';
import { publishAndVerify, startTestDns, type TestDns } from '../test-support/sso/test-dns.js';

interface DomainState {
  domain: string;
  verified: boolean;
  verified_at?: string;
  dns_record?: { type: string; name: string; value: string };
}

describe('single sign-on e-mail domains: verified by a DNS TXT record', () => {
  let s: TestServer;
  let idp: TestIssuer;
  let dns: TestDns;
  let aPath: string;
  let bPath: string;
  let b: string;
  const config = (email_domains: string[]) => ({ issuer: idp.issuer, client_id: idp.clientId, client_secret: idp.clientSecret, email_domains, default_role: 'Developer' });
  const domainsOf = async (path: string, token?: string): Promise<DomainState[]> => {
    const res = await s.request('GET', path, token ? { token } : {});
    assert.equal(res.status, 200, res.text);
    return res.body.email_domains as DomainState[];
  };
  const verify = (path: string, domain: string, token?: string) => s.request('POST', `${path}/domains/${domain}/verify`, token ? { token } : {});

  before(async () => {
    dns = await startTestDns();
    s = await startTestServer({ env: { OPS_OUTBOUND_ALLOW_PRIVATE: 'true', OPS_DNS_SERVERS: dns.server } });
    idp = await startTestIssuer();
    aPath = `/orgs/${s.tenants.a.orgId}/sso`;
    bPath = `/orgs/${s.tenants.b.orgId}/sso`;
    b = s.tenants.b.token;
  });
  after(async () => {
    await idp.close();
    await s.close();
    await dns.close();
  });

  test('PUT and GET list each domain unverified with the TXT record to publish; the token is stable across GETs and PUTs, and differs per domain and per organisation', async () => {
    const put = await s.request('PUT', aPath, { json: config(['studio.example', 'Games.example']) });
    assert.equal(put.status, 200, put.text);
    const domains = put.body.email_domains as DomainState[];
    assert.deepEqual(domains.map((d) => [d.domain, d.verified, d.verified_at]), [['games.example', false, undefined], ['studio.example', false, undefined]]);
    for (const d of domains) {
      assert.equal(d.dns_record!.type, 'TXT');
      assert.equal(d.dns_record!.name, `_opsplatform.${d.domain}`);
      assert.match(d.dns_record!.value, /^opsplatform-domain-verification=[0-9a-f]{32}$/);
    }
    assert.notEqual(domains[0]!.dns_record!.value, domains[1]!.dns_record!.value, 'a token per domain');
    assert.deepEqual(await domainsOf(aPath), domains, 'the same on GET');
    assert.deepEqual(await domainsOf(aPath), domains, 'and again');
    const again = await s.request('PUT', aPath, { json: { ...config(['games.example', 'studio.example']), enforce: true } });
    assert.deepEqual(again.body.email_domains, domains, 'a PUT that keeps the domains keeps their tokens');

    // Another organisation naming the same unverified domain: allowed, with a token of its own.
    const bPut = await s.request('PUT', bPath, { token: b, json: config(['studio.example']) });
    assert.equal(bPut.status, 200, bPut.text);
    const [bStudio] = bPut.body.email_domains as DomainState[];
    assert.equal(bStudio!.verified, false);
    assert.notEqual(bStudio!.dns_record!.value, domains[1]!.dns_record!.value, 'a token per organisation');
  });

  test('no record at the name → 400 naming the record looked up; nothing verified, no audit entry', async () => {
    const res = await verify(aPath, 'studio.example');
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.error.code, 'bad_request');
    assert.match(res.body.error.message, /^no TXT record was found at _opsplatform\.studio\.example: publish one there holding opsplatform-domain-verification=[0-9a-f]{32} /);
    assert.ok(dns.queries.includes('_opsplatform.studio.example'), 'the server asked the configured resolver');
    assert.equal((await domainsOf(aPath)).find((d) => d.domain === 'studio.example')!.verified, false);
    const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.domain_verify`);
    assert.deepEqual(audit.body.entries, []);
    // The name exists but holds no TXT record: the same answer.
    dns.txt.set('_opsplatform.studio.example', []);
    assert.match((await verify(aPath, 'studio.example')).body.error.message, /^no TXT record was found at _opsplatform\.studio\.example/);
  });

  test("records that do not hold the token (another organisation's, someone else's text) → 400 that never repeats what DNS holds", async () => {
    const [bStudio] = await domainsOf(bPath, b);
    dns.txt.set('_opsplatform.studio.example', [['<script>not ours</script>'], [bStudio!.dns_record!.value]]);
    const res = await verify(aPath, 'studio.example');
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error.message, /^_opsplatform\.studio\.example: none of the 2 TXT records found there holds this organisation's token: the record's value must be exactly opsplatform-domain-verification=[0-9a-f]{32}$/);
    assert.ok(!res.text.includes('not ours') && !res.text.includes(bStudio!.dns_record!.value), 'what DNS answered is not echoed');
    const one = await publishAndVerify(s, dns, 'studio.example', { value: 'opsplatform-domain-verification=0123' });
    assert.equal(one.status, 400);
    assert.match(one.body.error.message, /the TXT record found there does not hold this organisation's token/);
  });

  test('the DNS server failing (SERVFAIL) → 503 with Retry-After, naming the record and what failed', async () => {
    dns.failing.add('_opsplatform.studio.example');
    try {
      const res = await verify(aPath, 'studio.example');
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.error.code, 'storage_error');
      assert.equal(res.headers.get('retry-after'), '30');
      assert.match(res.body.error.message, /the DNS look-up of the TXT record at _opsplatform\.studio\.example failed \(the DNS server answered SERVFAIL: it could not resolve the name\)/);
    } finally {
      dns.failing.delete('_opsplatform.studio.example');
    }
  });

  test('the right value among other records → 200 verified; GET shows it without a record; verifying again changes nothing', async () => {
    const [, studio] = await domainsOf(aPath);
    // Long values arrive split in 255-octet strings: they are read joined.
    const value = studio!.dns_record!.value;
    dns.txt.set('_opsplatform.studio.example', [['v=spf1 -all'], [value.slice(0, 10), value.slice(10)]]);
    const res = await verify(aPath, 'Studio.Example');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.domain, 'studio.example');
    assert.equal(res.body.verified, true);
    assert.match(res.body.verified_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(res.body.dns_record, undefined);
    const listed = await domainsOf(aPath);
    assert.deepEqual(listed.find((d) => d.domain === 'studio.example'), res.body);
    assert.equal(listed.find((d) => d.domain === 'games.example')!.verified, false, 'each domain on its own');
    dns.txt.delete('_opsplatform.studio.example');
    const again = await verify(aPath, 'studio.example');
    assert.equal(again.status, 200, 'a verification is kept: the record may go');
    assert.deepEqual(again.body, res.body);
    // A PUT that keeps the domain keeps its verification.
    const put = await s.request('PUT', aPath, { json: config(['studio.example', 'games.example']) });
    assert.deepEqual((put.body.email_domains as DomainState[]).find((d) => d.domain === 'studio.example'), res.body);
  });

  test('the verification is in the audit log once (sso.domain_verify), with who and which record, never the token', async () => {
    const audit = await s.request('GET', `/orgs/${s.tenants.a.orgId}/audit?action=sso.domain_verify`);
    assert.equal(audit.status, 200, audit.text);
    const entries = audit.body.entries as Array<{ actor: { type: string }; target: { type: string; id: string }; outcome: string; details: Record<string, unknown> }>;
    assert.equal(entries.length, 1);
    assert.deepEqual([entries[0]!.target, entries[0]!.outcome, entries[0]!.details], [{ type: 'sso_domain', id: 'studio.example' }, 'success', { domain: 'studio.example', record: '_opsplatform.studio.example' }]);
    assert.equal(entries[0]!.actor.type, 'token');
    assert.ok(!audit.text.includes('opsplatform-domain-verification'));
  });

  test('another organisation verified the domain first → its verification is 409, and so is its PUT naming the domain', async () => {
    const res = await publishAndVerify(s, dns, 'studio.example', { orgId: s.tenants.b.orgId, token: b });
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.error.code, 'conflict');
    assert.match(res.body.error.message, /^studio\.example is verified by another organisation/);
    const put = await s.request('PUT', bPath, { token: b, json: config(['b.example', 'studio.example']) });
    assert.equal(put.status, 409, put.text);
    assert.equal(put.body.error.field, 'email_domains');
    assert.match(put.body.error.message, /^email_domains: studio\.example is verified by another organisation/);
    assert.equal((await s.request('PUT', bPath, { token: b, json: config(['b.example']) })).status, 200, 'other domains: saved');
  });

  test('two organisations verifying one domain at the same time: one wins, the other is 409', async () => {
    const aPut = await s.request('PUT', aPath, { json: config(['studio.example', 'games.example', 'race.example']) });
    const bPut = await s.request('PUT', bPath, { token: b, json: config(['b.example', 'race.example']) });
    assert.deepEqual([aPut.status, bPut.status], [200, 200]);
    const aRecord = (aPut.body.email_domains as DomainState[]).find((d) => d.domain === 'race.example')!.dns_record!;
    const bRecord = (bPut.body.email_domains as DomainState[]).find((d) => d.domain === 'race.example')!.dns_record!;
    dns.txt.set('_opsplatform.race.example', [[aRecord.value], [bRecord.value]]);
    const answers = await Promise.all([verify(aPath, 'race.example'), verify(bPath, 'race.example', b)]);
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409], answers.map((r) => r.text).join('\n'));
    const verifiedBy = await s.server.ctx.metadata.db.selectFrom('sso_email_domains').select('org_id').where('domain', '=', 'race.example').where('verified_at', 'is not', null).execute();
    assert.equal(verifiedBy.length, 1);
  });

  test('a domain not in the settings → 404; an organisation without single sign-on → 404', async () => {
    const res = await verify(aPath, 'elsewhere.example');
    assert.equal(res.status, 404, res.text);
    assert.match(res.body.error.message, /elsewhere\.example is not one of this organisation's single sign-on e-mail domains/);
    assert.equal((await verify(aPath, 'not a domain')).status, 404);
    assert.equal((await s.request('DELETE', bPath, { token: b })).status, 200);
    assert.equal((await verify(bPath, 'race.example', b)).status, 404);
  });

  test("another organisation's id → 403; an Admin's dashboard token → 403 (Owner only); a token without members:write → 403", async () => {
    assert.equal((await verify(aPath, 'games.example', b)).status, 403);
    assert.equal((await verify(bPath, 'b.example')).status, 403);
    const admin = await signedIn(s, 'admin@example.com', 'Admin');
    const refused = await verify(aPath, 'games.example', admin.token);
    assert.equal(refused.status, 403);
    assert.match(refused.body.error.message, /only an Owner/);
    const reader = await s.token(s.tenants.a, ['members:read']);
    const scoped = await verify(aPath, 'games.example', reader);
    assert.equal(scoped.status, 403);
    assert.equal(scoped.body.error.required_scope, 'members:write');
    assert.equal((await domainsOf(aPath)).find((d) => d.domain === 'games.example')!.verified, false);
  });

  test('a domain of 240 characters (its record name 253) is verified; a longer one → 400 saying it cannot be verified, nothing looked up', async () => {
    const longest = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(40)}.example`;
    const tooLong = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'e'.repeat(44)}.example`;
    assert.deepEqual([longest.length, tooLong.length], [240, 244]);
    assert.equal((await s.request('PUT', aPath, { json: config(['studio.example', 'games.example', longest, tooLong]) })).status, 200);
    const verified = await publishAndVerify(s, dns, longest);
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.verified, true);
    const asked = dns.queries.length;
    const res = await verify(aPath, tooLong);
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.error.message, /is too long to hold a record at _opsplatform\.a+\..* \(a DNS name has at most 253 characters\): it cannot be verified$/);
    assert.equal(dns.queries.length, asked);
  });

  test('a domain removed from the settings and named again starts over: a new token, unverified; so after DELETE', async () => {
    const before = (await domainsOf(aPath)).find((d) => d.domain === 'games.example')!;
    assert.equal((await s.request('PUT', aPath, { json: config(['studio.example']) })).status, 200);
    const readded = (await (await s.request('PUT', aPath, { json: config(['studio.example', 'games.example']) })).body.email_domains as DomainState[]).find((d) => d.domain === 'games.example')!;
    assert.equal(readded.verified, false);
    assert.notEqual(readded.dns_record!.value, before.dns_record!.value);

    assert.equal((await s.request('PUT', aPath, { json: config(['studio.example']) })).status, 200);
    const readdedVerified = (await (await s.request('PUT', aPath, { json: config(['studio.example', 'games.example']) })).body.email_domains as DomainState[]).find((d) => d.domain === 'studio.example')!;
    assert.equal(readdedVerified.verified, true, 'kept while it stays in the settings');

    assert.equal((await s.request('DELETE', aPath)).status, 200);
    const fresh = (await (await s.request('PUT', aPath, { json: config(['studio.example']) })).body.email_domains as DomainState[])[0]!;
    assert.equal(fresh.verified, false, 'DELETE forgets the domains: verified again after');
    const bPut = await s.request('PUT', bPath, { token: b, json: config(['studio.example']) });
    assert.equal(bPut.status, 200, 'and no longer verified by A, another organisation may name it');
  });

  test('migration 0020: domains claimed before it stay in the settings unverified, each with a token of its own; down keeps one organisation per domain', async () => {
    const db = s.server.ctx.metadata.db;
    // B names studio.example too: down keeps the verified claim, else the first made.
    await db.updateTable('sso_email_domains').set({ created_at: '2020-01-01T00:00:00.000Z' }).where('org_id', '=', s.tenants.b.orgId).execute();
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    assert.equal((await migrator.migrateTo('0019-audit-append')).error, undefined);
    const kept = await sql<{ domain: string; org_id: string }>`select domain, org_id from sso_domains order by domain`.execute(db);
    assert.deepEqual(kept.rows, [{ domain: 'studio.example', org_id: s.tenants.b.orgId }], "B's, claimed first, of the two organisations naming it");
    await sql`insert into sso_domains (domain, org_id) values ('legacy.example', ${s.tenants.a.orgId})`.execute(db);
    assert.equal((await migrator.migrateToLatest()).error, undefined);
    const [legacy, ...aRest] = await domainsOf(aPath);
    const [studio, ...bRest] = await domainsOf(bPath, b);
    assert.deepEqual([legacy!.domain, legacy!.verified, aRest, studio!.domain, studio!.verified, bRest], ['legacy.example', false, [], 'studio.example', false, []]);
    for (const d of [legacy!, studio!]) assert.match(d.dns_record!.value, /^opsplatform-domain-verification=[0-9a-f]{32}$/);
    assert.notEqual(legacy!.dns_record!.value, studio!.dns_record!.value);
    const start = await new Browser(s).request('POST', '/dashboard/sso/start', { email: 'ada@legacy.example' });
    assert.equal(start.status, 404, `a claim made without proof routes nobody: ${start.text}`);
    assert.equal((await publishAndVerify(s, dns, 'legacy.example')).status, 200);
  });
});
