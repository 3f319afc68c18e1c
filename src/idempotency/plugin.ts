import { pipeline } from 'node:stream';
import fp from 'fastify-plugin';
import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onSendHookHandler, preHandlerAsyncHookHandler, preParsingHookHandler } from 'fastify';
import { AppError, conflict } from '../errors/app-error.js';
import { requireAuth } from '../auth/auth-plugin.js';
import { checkKey, keyHeader, replayedHeader } from './key.js';
import { answerKey } from './sealed-answer.js';
import { HashingStream, RawBodyObserver, digestOfRest } from './body-digest.js';
import type { BodyDigest, IdempotencyStore, KnownRequest } from './idempotency-store.js';
import { KeyedRequest, type RecordAnswer } from './keyed-request.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Takes the Idempotency-Key header (DECISIONS.md §16, docs/idempotency.md). `body`: Fastify
     * reads the body (a JSON or raw parser), hashed on its way. `stream`: the handler streams
     * `request.raw` itself (multipart), hashed as it passes.
     */
    idempotency?: 'body' | 'stream';
  }
}

interface KeyState {
  key: string;
  hashing?: HashingStream;
  keyed?: KeyedRequest;
}

const states = new WeakMap<FastifyRequest, KeyState>();

/** The request's claim, when it carries an Idempotency-Key and this process runs it. */
export const idempotencyOf = (request: FastifyRequest): KeyedRequest | undefined => states.get(request)?.keyed;

/**
 * For a route that commits its effect in a transaction: the hook its service runs inside that
 * transaction so the answer `status` commits with the effect. Undefined without a key.
 */
export async function answerInCommit<Body>(request: FastifyRequest, status: number): Promise<RecordAnswer<Body> | undefined> {
  return states.get(request)?.keyed?.answerIn<Body>(status);
}

const KeyHeaderSchema = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7E]+$',
  description:
    'Makes a retry safe (docs/idempotency.md): a retry with the same key and body within 24 hours gets the first answer again, with `Idempotent-Replayed: true`, and changes nothing. Scoped to the token. Another body with the key → 409 conflict; while the first request runs → 409 conflict with Retry-After. 5xx answers are not remembered; 2xx and 4xx are.',
});

/** The header in the route's OpenAPI document (the hooks below check it, so Ajv does not). */
function documented(schema: FastifySchema | undefined): FastifySchema {
  const own = schema?.unvalidated?.headers as TObject | undefined;
  const headers = Type.Object({ ...(own?.properties ?? {}), 'Idempotency-Key': Type.Optional(KeyHeaderSchema) });
  return { ...schema, unvalidated: { ...schema?.unvalidated, headers: headers as TSchema } };
}

const bearer = (request: FastifyRequest): string => /^Bearer[ ]+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';

export interface IdempotencyPluginOptions {
  store: IdempotencyStore;
}

/**
 * Idempotency-Key on every route whose config says `idempotency` (one line per route). The key
 * is checked after authentication and before the body is read; the claim is made once the body
 * is validated (or, streamed, before the handler reads it); a known key is answered from its
 * record without running the handler.
 */
export const idempotencyPlugin = fp<IdempotencyPluginOptions>(
  async (app: FastifyInstance, { store }) => {
    const readKey = (mode: 'body' | 'stream'): preParsingHookHandler =>
      function readKey(request, _reply, payload, done) {
        const header = request.headers[keyHeader];
        if (header === undefined) return done(null, payload);
        let key: string;
        try {
          key = checkKey(header);
        } catch (error) {
          return done(error as Error);
        }
        const state: KeyState = { key };
        states.set(request, state);
        if (mode === 'stream') return done(null, payload);
        state.hashing = new HashingStream();
        // pipeline, not pipe: a body cut short fails the parser instead of leaving it waiting.
        pipeline(payload, state.hashing, () => {});
        done(null, state.hashing);
      };

    const claim = (mode: 'body' | 'stream'): preHandlerAsyncHookHandler =>
      async function claim(request: FastifyRequest, reply: FastifyReply) {
        const state = states.get(request);
        if (!state) return;
        const auth = requireAuth(request);
        const body = state.hashing ? await state.hashing.digest : undefined;
        const scope = { tokenId: auth.tokenId, key: state.key, sealKey: answerKey(bearer(request), state.key) };
        const endpoint = `${request.method} ${request.url.split('?')[0]}`;
        const result = await store.claim(scope, { endpoint, body });
        if (result.claimed) {
          const observed = mode === 'stream' ? new RawBodyObserver(request.raw) : body!;
          state.keyed = new KeyedRequest(store, result.claimed, observed, reply, request.log);
          return;
        }
        const known = result.known;
        if (known.endpoint !== endpoint) throw otherEndpoint(state.key, known);
        if (known.state === 'running') {
          if (body && known.body && body.sha256 !== known.body.sha256) throw otherBody(state.key, known);
          throw new AppError(
            'conflict',
            `a request with Idempotency-Key "${state.key}" is still being processed; retry in a moment to get its answer`,
            {},
            { 'Retry-After': '1' },
          );
        }
        const sent: BodyDigest = body ?? (await digestOfRest(request.raw));
        if (sent.sha256 !== known.body?.sha256) throw otherBody(state.key, known);
        const answer = known.answer!;
        reply.code(answer.status).header(replayedHeader, 'true').header('content-type', answer.contentType);
        // Bytes are sent as they are (no serializer): the first answer's bytes.
        return reply.send(answer.body);
      };

    const remember: onSendHookHandler = async (request, reply, payload) => {
      const keyed = states.get(request)?.keyed;
      if (keyed) await keyed.finish(reply.statusCode, String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8'), payload);
      return payload;
    };

    app.addHook('onRoute', (route) => {
      const mode = route.config?.idempotency;
      if (!mode) return;
      if (!route.config?.scope) throw new Error(`route ${route.method} ${route.url}: Idempotency-Key is scoped to the token, so the route must declare a scope`);
      route.schema = documented(route.schema);
      route.preParsing = [...hooks(route.preParsing), readKey(mode)];
      route.preHandler = [...hooks(route.preHandler), claim(mode)];
      route.onSend = [...hooks(route.onSend), remember];
    });
  },
  { name: 'idempotency', dependencies: ['auth'] },
);

const hooks = <Hook>(own: Hook | Hook[] | undefined): Hook[] => (own ? (Array.isArray(own) ? own : [own]) : []);

function otherEndpoint(key: string, known: KnownRequest): AppError {
  return conflict(`Idempotency-Key "${key}" was already used at ${known.firstUse} for ${known.endpoint}; use a new key for this request`);
}

function otherBody(key: string, known: KnownRequest): AppError {
  return conflict(
    `Idempotency-Key "${key}" was already used at ${known.firstUse} with a different request body; send the same body to get the first answer again, or use a new key for a new request`,
  );
}
