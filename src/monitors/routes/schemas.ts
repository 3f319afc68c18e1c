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

const NullableTime = (description: string) => Type.Union([DateTime(), Type.Null()], { description });

/** status.ts's MonitorStatus: read-only, the same in the list and in GET /monitors/{id} (docs/monitors.md "Status"). */
export const MonitorStatusSchema = Type.Object(
  {
    state: Type.Union([Type.Literal('firing'), Type.Literal('pending'), Type.Literal('no_data'), Type.Literal('ok'), Type.Literal('watching')], {
      description:
        'threshold: the worst of its groups, firing > pending > no_data > ok (no_data: no group had a value at the last evaluation, or it was not evaluated yet); ' +
        'match: watching. A mute does not change it (see muted_until)',
    }),
    groups_firing: Type.Integer({ minimum: 0, description: 'threshold: groups firing now (match: 0)' }),
    last_value: Type.Union([Type.Number(), Type.Null()], { description: "threshold: the last evaluation's value; over several groups the one nearest to firing (the highest for > and >=, the lowest for < and <=); null without one" }),
    last_evaluated_at: NullableTime('threshold: when it was last evaluated; null before the first evaluation (and for a match monitor)'),
    next_evaluation_at: NullableTime('threshold: when the scheduler evaluates it next (past: due at the next tick); null for a match monitor'),
    last_match_at: NullableTime(
      'when it last matched, null before: match, the ingested_at of its latest matching event as of its latest notification (at most group_window behind); ' +
        "threshold, the last evaluation at which a group's value met the condition",
    ),
    last_notified_at: NullableTime('when it last stored a firing or resolved notification for its channels (tests left out)'),
  },
  { additionalProperties: false, readOnly: true, description: 'computed, read-only (not a field of POST or PATCH)' },
);

export const MonitorSchema = Type.Object(
  {
    id: Type.String({ description: 'mon_<ULID>' }),
    ...writable,
    muted_until: Type.Union([DateTime(), Type.Null()]),
    notify_on_resolve: Type.Boolean(),
    created_at: DateTime(),
    updated_at: DateTime(),
    status: MonitorStatusSchema,
  },
  { $id: 'Monitor' },
);
