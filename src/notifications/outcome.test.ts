import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import fc from 'fast-check';
import { describeAnswer } from './outcome.js';

test("a failed delivery's error is the status in words, and a known Discord or Slack error named in ours", () => {
  assert.equal(describeAnswer(503, 'busy'), 'HTTP 503 Service Unavailable');
  assert.equal(describeAnswer(404, '{"message": "Unknown Webhook", "code": 10015}'), 'HTTP 404 Not Found (Discord: unknown webhook (deleted, or the URL is wrong))');
  assert.equal(describeAnswer(400, '{"message": "Invalid Form Body", "code": 50035, "errors": {"embeds": {}}}'), 'HTTP 400 Bad Request (Discord: the message was refused as invalid (a field over its limit))');
  assert.equal(describeAnswer(404, 'no_service'), 'HTTP 404 Not Found (Slack: no_service)');
  assert.equal(describeAnswer(403, 'ami-id\nhostname\ninstance-id'), 'HTTP 403 Forbidden');
  assert.equal(describeAnswer(599, ''), 'HTTP 599');
  assert.equal(describeAnswer(400, '{"code": 1, "message": "secret"}'), 'HTTP 400 Bad Request');
});

test('whatever the answer holds, the description is the status, or the status and one of the known errors', () => {
  fc.assert(
    fc.property(fc.integer({ min: 100, max: 599 }), fc.oneof(fc.string(), fc.json(), fc.constantFrom('no_service', '{"code": 10015}')), (status, body) => {
      const head = `HTTP ${status}${STATUS_CODES[status] ? ` ${STATUS_CODES[status]}` : ''}`;
      const description = describeAnswer(status, body);
      if (description === head) return;
      const known = description.slice(head.length);
      assert.ok(description.startsWith(head), description);
      assert.match(known, /^ \((Slack: (no_service|[a-z_]+)|Discord: [A-Za-z ',()]+)\)$/, `${JSON.stringify(body)} → ${description}`);
      // A Slack token is told only when it is the whole answer, a Discord error only from its numeric code.
      if (known.startsWith(' (Slack')) assert.equal(known, ` (Slack: ${body.trim()})`);
      else assert.equal(typeof (JSON.parse(body) as { code: unknown }).code, 'number');
    }),
  );
});
