import { Type } from '@sinclair/typebox';
import { DateTime } from '../../http/schemas.js';

export const ChannelKindSchema = Type.Union([Type.Literal('webhook'), Type.Literal('discord'), Type.Literal('slack')], {
  description: 'webhook: signed JSON (§18 body); discord / slack: that service\'s webhook body',
});
export const ChannelName = Type.String({ minLength: 1, maxLength: 100 });
export const ChannelUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'http:// or https://; refused when its host resolves to a private, loopback, link-local or metadata address' });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const ChannelSchema = Type.Object(
  {
    id: Type.String({ description: 'ch_<ULID>' }),
    name: Type.String(),
    kind: ChannelKindSchema,
    url: Type.String({ description: 'Discord and Slack URLs are secrets: shown as their origin and last four characters' }),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'why the channel is disabled (20 failed deliveries in a row, or a PATCH)' }),
    consecutive_failures: Type.Integer({ description: 'failed attempts since the last delivered one' }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Channel' },
);

export const CreatedChannel = Type.Composite([
  Type.Omit(ChannelSchema, []),
  Type.Object({
    signing_secret: Type.Optional(Type.String({ description: 'webhook channels only: whsec_…, shown once; keys X-Ops-Signature' })),
  }),
]);

export const AttemptSchema = Type.Object({
  attempted_at: DateTime(),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'HTTP status; null for a timeout, connection error or refused address' }),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
});

export const DeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'the delivery id (dlv_<ULID>), sent as X-Ops-Delivery-Id on every attempt' }),
    channel_id: Type.String(),
    monitor_id: Type.String({ description: "the monitor that notified; the channel's own id for a test" }),
    status: Type.Union([Type.Literal('firing'), Type.Literal('resolved'), Type.Literal('test')]),
    state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempt_count: Type.Integer(),
    next_attempt_at: Type.Union([DateTime(), Type.Null()]),
    last_status: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    created_at: DateTime(),
    finished_at: Type.Union([DateTime(), Type.Null()]),
    attempts: Type.Array(AttemptSchema, { description: 'every request sent, oldest first' }),
  },
  { $id: 'ChannelDelivery' },
);
