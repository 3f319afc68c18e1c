import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-support/test-server.js';

describe('members', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s.close());

  test('GET /orgs/{orgId}/members lists the owner', async () => {
    const res = await s.request('GET', `/orgs/${s.tenants.a.orgId}/members`);
    assert.equal(res.status, 200);
    assert.equal(res.body.members.length, 1);
    assert.equal(res.body.members[0].role.name, 'Owner');
    assert.equal(res.body.nextCursor, '');
  });
});
