import { Type } from '@sinclair/typebox';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { DateTime } from '../../http/schemas.js';
import type { QueryService } from '../../query/query-service.js';
import { preview } from '../preview.js';
import { ConditionSchema } from './schemas.js';

const Group = Type.Record(Type.String(), Type.Unknown());

/** POST /monitors/preview (monitors:read): when a threshold monitor would have fired. */
export function registerPreviewRoutes(v1: Api, ctx: AppContext, queries: QueryService): void {
  v1.post(
    '/monitors/preview',
    {
      config: { scope: 'monitors:read' },
      schema: {
        tags: ['monitors'],
        summary: "A threshold monitor's values by bin(every) over the last 24 h (or from/to) and when it would have fired",
        body: Type.Object(
          {
            q: Type.String({ maxLength: 4096 }),
            every: Type.Optional(Type.String({ maxLength: 16 })),
            condition: ConditionSchema,
            for: Type.Optional(Type.String({ maxLength: 16 })),
            no_data: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('alerting')])),
            window: Type.Optional(Type.String({ maxLength: 16, description: 'accepted for a form\'s convenience; bins are `every` wide' })),
            from: Type.Optional(DateTime()),
            to: Type.Optional(DateTime()),
          },
          { additionalProperties: true },
        ),
        response: {
          200: Type.Object({
            points: Type.Array(Type.Object({ ts: DateTime(), group: Group, value: Type.Union([Type.Number(), Type.Null()]) })),
            firings: Type.Array(Type.Object({ group: Group, from: DateTime(), to: DateTime() })),
          }),
        },
      },
    },
    async (request) => preview(queries, requireAuth(request).tenant, request.body, ctx.clock.now()),
  );
}
