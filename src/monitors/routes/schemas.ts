import { Type } from '@sinclair/typebox';
import { DateTime } from '../../http/schemas.js';

const Duration = (description: string) => Type.String({ maxLength: 16, description: `<n><unit>, unit s m h d: ${description}` });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const ConditionSchema = Type.Object(
  {
    op: Type.Union([Type.Literal('>'), Type.Literal('>='), Type.Literal('<'), Type.Literal('<='), Type.Literal('==')]),
    value: Type.Number(),
  },
  { additionalProperties: false },
);

/** The fields a client writes; POST requires name, kind, q and channel_ids, PATCH none. */
const writable = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  kind: Type.Union([Type.Literal('threshold'), Type.Literal('match')]),
  q: Type.String({ maxLength: 4096, description: 'threshold: a SOQL stats query with one aggregate (`… stats count() by source`); match: a SOQL filter' }),
  channel_ids: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 20, description: "this project and mode's channels; another's is a 400" }),
  muted_until: Type.Optional(Type.Union([DateTime(), Type.Null()], { description: 'no notification before this time' })),
  notify_on_resolve: Type.Optional(Type.Boolean({ description: 'default true' })),
  window: Type.Optional(Duration('threshold: the query covers [now - window, now], 1m…24h')),
  every: Type.Optional(Duration('threshold: evaluated this often, 1m…1h (default 1m)')),
  condition: Type.Optional(ConditionSchema),
  for: Type.Optional(Duration('threshold: pending this long before firing, 0s…24h (default 0s)')),
  no_data: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('alerting')], { description: 'threshold: a group (or, without by, the monitor) with no value (default ok)' })),
  repeat: Type.Optional(Duration('threshold: notified again this often while firing, 1m…7d (default 4h)')),
  group_window: Type.Optional(Duration('match: later matches within it go out together, 1s…1h (default 60s)')),
};

export const CreateMonitorBody = Type.Object(writable, { additionalProperties: false });
export const PatchMonitorBody = Type.Partial(Type.Object(writable), { additionalProperties: false });

export const MonitorSchema = Type.Object(
  {
    id: Type.String({ description: 'mon_<ULID>' }),
    ...writable,
    muted_until: Type.Union([DateTime(), Type.Null()]),
    notify_on_resolve: Type.Boolean(),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'Monitor' },
);
