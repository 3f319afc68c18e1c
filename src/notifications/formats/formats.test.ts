import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NotificationFacts } from '../notification.js';
import { discordBody, discordLimits, embedCharacters } from './discord-body.js';
import { slackBody, slackLimits } from './slack-body.js';
import { webhookBody } from './webhook-body.js';
import { truncate } from './text.js';

// Any text: every code point (lone surrogates included), from empty to far past every limit.
const text = (maxLength: number) => fc.string({ unit: 'binary', maxLength });
const anyText = fc.oneof(text(20), text(300), text(5000));
const evidence = fc.record({
  id: fc.constant('f_01J00000000000000000000000'),
  url: fc.oneof(fc.constant('https://cdn.example/abc/x.png'), fc.webUrl(), anyText),
  filename: anyText,
  content_type: fc.constantFrom('image/png', 'image/jpeg', 'video/mp4', 'application/pdf'),
});
const event = fc.record(
  {
    event_id: fc.uuid(),
    ts: anyText,
    severity: fc.constantFrom('debug', 'info', 'warn', 'error', 'fatal'),
    event: anyText,
    actor: anyText,
    source: anyText,
    message: anyText,
    payload: fc.dictionary(text(50), fc.oneof(anyText, fc.integer(), fc.constant(null))),
    evidence: fc.array(evidence, { maxLength: 5 }),
  },
  { requiredKeys: ['event_id', 'ts', 'severity', 'event', 'message', 'payload'] },
);
const facts: fc.Arbitrary<NotificationFacts> = fc.record({
  monitor: fc.record({ id: anyText, name: anyText, kind: fc.constantFrom('threshold', 'match', 'test') }),
  status: fc.constantFrom('firing', 'resolved', 'test'),
  group: fc.dictionary(anyText, fc.oneof(anyText, fc.integer()), { maxKeys: 8 }),
  value: fc.oneof(fc.double(), fc.constant(null)),
  condition: fc.oneof(fc.record({ op: fc.constantFrom('>', '>=', '<', '<=', '=='), value: fc.double() }), fc.constant(null)),
  window: fc.record({ from: anyText, to: anyText }),
  started_at: fc.oneof(fc.constant('2026-01-01T00:00:00.000Z'), anyText),
  resolved_at: fc.oneof(fc.constant(null), anyText),
  events_total: fc.nat(),
  events: fc.array(event, { maxLength: 10 }),
  url: fc.oneof(fc.webUrl(), anyText),
});
const delivery = 'dlv_01J00000000000000000000000';

test('any notification as a Discord embed stays within every documented limit', () => {
  fc.assert(
    fc.property(facts, (f) => {
      const body = discordBody(f, delivery);
      const [embed] = body.embeds;
      assert.ok(embed.title.length <= discordLimits.title);
      assert.ok(embed.description.length <= discordLimits.description);
      assert.ok(embed.fields.length <= discordLimits.fields);
      for (const field of embed.fields) {
        assert.ok(field.name.length >= 1 && field.name.length <= discordLimits.fieldName);
        assert.ok(field.value.length >= 1 && field.value.length <= discordLimits.fieldValue);
      }
      assert.ok(embed.footer.text.length <= discordLimits.footer);
      assert.ok(embedCharacters(embed) <= discordLimits.total, `${embedCharacters(embed)} characters`);
      assert.deepEqual(body.allowed_mentions, { parse: [] });
      JSON.parse(JSON.stringify(body));
    }),
    { numRuns: 300 },
  );
});

test('any notification as Slack blocks stays within every documented limit', () => {
  fc.assert(
    fc.property(facts, (f) => {
      const body = slackBody(f, delivery);
      assert.ok(body.blocks.length <= slackLimits.blocks);
      assert.ok(body.text.length <= slackLimits.fallbackText);
      for (const block of body.blocks) {
        if (block.type === 'header') assert.ok(block.text.text.length >= 1 && block.text.text.length <= slackLimits.headerText);
        if (block.type === 'section') assert.ok(block.text.text.length >= 1 && block.text.text.length <= slackLimits.sectionText);
        if (block.type === 'image') assert.ok(block.image_url.length <= slackLimits.imageUrl && block.alt_text.length >= 1 && block.alt_text.length <= slackLimits.altText);
        if (block.type === 'context') for (const e of block.elements) assert.ok(e.text.length <= slackLimits.contextText);
      }
    }),
    { numRuns: 300 },
  );
});

test('the first evidence image is the embed image and the image block; the others are linked', () => {
  const f: NotificationFacts = {
    monitor: { id: 'mon_1', name: 'kicks', kind: 'match' },
    status: 'firing',
    group: {},
    value: 3,
    condition: { op: '>', value: 2 },
    window: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-01T00:05:00.000Z' },
    started_at: '2026-01-01T00:05:00.000Z',
    events_total: 1,
    events: [
      {
        event: 'player.kick',
        message: 'aimbot',
        payload: { evidence: 'f_1' },
        evidence: [
          { id: 'f_1', url: 'https://cdn.example/a/shot.png', filename: 'shot.png', content_type: 'image/png' },
          { id: 'f_2', url: 'https://cdn.example/b/demo.mp4', filename: 'demo.mp4', content_type: 'video/mp4' },
        ],
      },
    ],
    url: 'https://ops.example/dashboard/',
  };
  const discord = discordBody(f, delivery).embeds[0];
  assert.equal(discord.image?.url, 'https://cdn.example/a/shot.png');
  assert.match(discord.fields[0]!.value, /\[demo\.mp4\]\(https:\/\/cdn\.example\/b\/demo\.mp4\)/);
  const slack = slackBody(f, delivery);
  assert.deepEqual(slack.blocks.find((b) => b.type === 'image'), { type: 'image', image_url: 'https://cdn.example/a/shot.png', alt_text: 'shot.png' });
  assert.ok(JSON.stringify(slack).includes('<https://cdn.example/b/demo.mp4|demo.mp4>'));
  const webhook = JSON.parse(webhookBody(f, delivery));
  assert.equal(webhook.version, '1');
  assert.equal(webhook.delivery_id, delivery);
  assert.deepEqual(webhook.events[0].evidence[0].id, 'f_1');
});

test('truncate never splits a surrogate pair and marks the cut', () => {
  fc.assert(
    fc.property(text(100), fc.nat(120), (s, max) => {
      const out = truncate(s, max);
      assert.ok(out.length <= max);
      if (out !== s && out.length >= 2) assert.ok(!/[\ud800-\udbff]$/.test(out.slice(0, -1)) || s.length === 0);
    }),
  );
  assert.equal(truncate('a😀b', 3), 'a…');
});
