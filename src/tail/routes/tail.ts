import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import { requireAuth } from '../../auth/auth-plugin.js';
import { AppError, badRequest } from '../../errors/app-error.js';
import type { EventsRuntime } from '../../events/runtime.js';
import { assertDatasetsExist, compilePredicate, parseSoql, rejectAggregationForTail } from '../../soql/index.js';
import { sseHeaders } from '../sse.js';
import type { TailHub } from '../hub.js';
import { clampTo, parsePosition, type TailPosition } from '../../engine/tail-position.js';

const TailBody = Type.Object(
  { q: Type.String({ description: 'a SOQL query without group by; "" matches every event' }) },
  { additionalProperties: false },
);

/** `Last-Event-ID`: the position of the last event the client received (tail-position.ts), or undefined. */
function lastEventId(request: FastifyRequest): TailPosition | undefined {
  const raw = request.headers['last-event-id'];
  const value = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  if (value === undefined || value.trim() === '') return undefined;
  const position = parsePosition(value);
  if (!position) throw badRequest('Last-Event-ID must be the id of an event this stream sent');
  return position;
}

/**
 * POST /query/tail. Checks in the order of DECISIONS §11: token and scope (auth plugin), plan
 * (this route's onRequest hook, so before the body is even read), query, then a session slot.
 * Every refusal is an ordinary JSON error; only then is the reply hijacked for the stream.
 */
export function registerTailRoute(v1: Api, ctx: AppContext, events: EventsRuntime, hub: TailHub): void {
  v1.post(
    '/query/tail',
    {
      config: { scope: 'logs:read' },
      onRequest: async (request) => {
        const { plan } = requireAuth(request);
        if (!ctx.plans.limits(plan).live_tail) {
          const required = ctx.plans.firstWithLiveTail();
          throw new AppError(
            'tier_upgrade_required',
            `live tail is not part of the ${plan} plan${required ? `; upgrade to ${required}` : ''}`,
            { required_plan: required ?? null },
          );
        }
      },
      schema: {
        tags: ['query'],
        summary: 'Live tail: stream matching events as Server-Sent Events',
        description:
          'Streams events ingested after the session opened that match `q`, oldest first, at most 200 per batch: each as an ' +
          '`id:` line (resume with `Last-Event-ID`) and a `data:` line holding the event without org_id and project_id. ' +
          'A `:heartbeat` comment is sent periodically; the stream closes after a period with no matching event. ' +
          'At most 3 sessions per token on one API host. Plan Logs Pro or higher.',
        body: TailBody,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ description: 'resume after this event id' })) }),
        response: {
          200: {
            description: 'the event stream',
            content: { 'text/event-stream': { schema: Type.String() } },
          },
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const query = parseSoql(request.body.q);
      rejectAggregationForTail(query);
      const active = await events.datasets.listActive(auth.tenant);
      assertDatasetsExist(query, new Map(active.map((d) => [d.name, d.id])));
      const predicate = compilePredicate(query, { now: ctx.clock.now() });
      const resumeAfter = lastEventId(request);

      const slot = hub.reserve(auth.tokenId);
      if (!slot) {
        throw new AppError(
          'tail_session_limit_exceeded',
          `at most ${hub.options.maxSessionsPerToken} live tail sessions may be open per token on this host; close one first`,
          // The number in the message, for clients that explain it (the dashboard's explorer).
          { limit: hub.options.maxSessionsPerToken },
        );
      }
      let after: TailPosition;
      try {
        const end = await events.store.tailStart(auth.tenant);
        // An id beyond the store's end cannot be ours: start from now rather than wait for it.
        after = resumeAfter === undefined ? end : clampTo(resumeAfter, end);
      } catch (error) {
        slot.release();
        throw error;
      }

      reply.hijack();
      // Headers the hooks set on the reply (X-Request-Id, rate limit, CORS) travel with the stream.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
      reply.raw.writeHead(200, sseHeaders);
      reply.raw.flushHeaders();
      hub.open({ tenant: auth.tenant, predicate, after, res: reply.raw, slot });
    },
  );
}
