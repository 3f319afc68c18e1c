import { Type } from '@sinclair/typebox';
import type { Api } from '../http/types.js';
import type { AppContext } from '../app/context.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { PageQuery } from '../pagination/page.js';
import { tenantKey } from '../tenancy/tenant.js';
import { DateTime } from '../http/schemas.js';
import { scopes } from '../auth/scopes.js';
import { answerInCommit } from '../idempotency/index.js';

const Mode = Type.Union([Type.Literal('live'), Type.Literal('test')]);
const TokenInfoSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    mode: Mode,
    scopes: Type.Array(Type.String()),
    last_four: Type.String({ description: 'last four characters of the token, to tell tokens apart' }),
    expires_at: Type.Union([DateTime(), Type.Null()]),
    last_used_at: Type.Union([DateTime(), Type.Null()]),
    created_at: DateTime(),
    created_by_user_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'the member who created the token in the web dashboard; null for tokens made with opsctl or another API token. A Developer signed in to the dashboard lists and revokes only their own',
    }),
  },
  { $id: 'TokenInfo' },
);
const CreatedToken = Type.Composite([TokenInfoSchema, Type.Object({ token: Type.String({ description: 'shown once' }) })]);

/** DECISIONS.md §14: tokens of the caller's project and mode. */
export function registerTokenRoutes(app: Api, ctx: AppContext): void {
  app.addSchema(TokenInfoSchema);

  app.post(
    '/tokens',
    {
      config: { scope: 'tokens:write', idempotency: 'body' },
      schema: {
        tags: ['tokens'],
        summary: 'Create an API token for this project (shown once)',
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 100 }),
            scopes: Type.Array(Type.String({ enum: [...scopes] }), { minItems: 1, maxItems: scopes.length }),
            mode: Type.Optional(Mode),
            expires_at: Type.Optional(Type.Union([DateTime(), Type.Null()])),
          },
          { additionalProperties: false },
        ),
        response: { 201: CreatedToken },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { name, scopes: wanted, mode, expires_at } = request.body;
      const created = await ctx.tokens.createFor(auth, name, wanted, mode, expires_at ?? null, await answerInCommit(request, 201));
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/tokens',
    {
      config: { scope: 'tokens:write' },
      schema: {
        tags: ['tokens'],
        summary: "List this project's active tokens (never their secrets)",
        description:
          "Tokens of the caller's project and mode. The web dashboard's own short-lived session tokens are left out; a Developer's dashboard session sees only the tokens that Developer created.",
        querystring: PageQuery,
        response: { 200: Type.Object({ tokens: Type.Array(Type.Ref(TokenInfoSchema)), next_cursor: Type.String(), has_more: Type.Boolean() }) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const owner = tenantKey(auth.tenant);
      const page = ctx.paginator.request(request.query, 'tokens', owner);
      const rows = await ctx.tokens.list(auth, page);
      const { items, nextCursor, hasMore } = ctx.paginator.page(rows, page, 'tokens', owner, (t) => [t.created_at, t.id]);
      return { tokens: items, next_cursor: nextCursor, has_more: hasMore };
    },
  );

  app.delete(
    '/tokens/:id',
    {
      config: { scope: 'tokens:write' },
      schema: {
        tags: ['tokens'],
        summary: 'Revoke a token',
        description: "A Developer's dashboard session revokes only the tokens that Developer created: another's answers 404, as an unknown id does.",
        params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
        response: { 200: Type.Object({ id: Type.String(), revoked: Type.Literal(true) }) },
      },
    },
    async (request) => {
      await ctx.tokens.revoke(requireAuth(request), request.params.id);
      return { id: request.params.id, revoked: true as const };
    },
  );
}
