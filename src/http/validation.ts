import type { FastifyServerOptions } from 'fastify';
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type CompilerOptions = { customOptions?: Record<string, unknown> };
type Route = { httpPart?: string };
type Validate = ((data: unknown, context?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
type Compile = (route: Route) => Validate;
type BuildFromPool = (externalSchemas: Record<string, unknown>, options: CompilerOptions) => Compile;
type Serialize = (data: unknown) => string;

export interface SchemaCompileOptions {
  /**
   * Compile each route's validators and serializers when the route first runs instead of at
   * start. Fastify compiles all of them at start (Ajv for every request part, fast-json-stringify
   * for every response code of ~170 routes, each Ajv instance built with the shared schemas):
   * about 1.6 s of CPU, 60% of a server's start. A test server answers a few of its routes, so
   * the tests compile on first use; `opsctl serve` compiles at start, where a bad schema must
   * stop the start rather than fail the first request that meets it (src/http/http.test.ts
   * starts that way, so every schema still compiles in `npm test`).
   */
  onFirstUse?: boolean;
}

/**
 * A validator compiled on its first call. Fastify reads `schemaEnv` before calling (to pass Ajv
 * the parent of the value) and `errors` after: both come from the compiled function.
 */
function validateOnFirstUse(compile: () => Validate): Validate {
  let compiled: Validate | undefined;
  const get = () => (compiled ??= compile());
  const validate: Validate = (data, context) => get()(data, context);
  Object.defineProperty(validate, 'errors', { get: () => get().errors });
  Object.defineProperty(validate, 'schemaEnv', { get: () => get().schemaEnv });
  return validate;
}

/**
 * Fastify's validator with one change: JSON bodies are never type-coerced. By default Ajv turns
 * `{"name": 123}` into "123" and `{"scopes": "all"}` into ["all"], so a client's wrong type is
 * answered as if it were right. A body must carry the declared types (400 naming the field
 * otherwise); path, query string and headers are text on the wire and are still parsed into
 * the numbers and booleans their schemas declare. Serializers are Fastify's own.
 */
export function exactBodyValidation(options: SchemaCompileOptions = {}): NonNullable<FastifyServerOptions['schemaController']> {
  const pool = AjvCompiler() as unknown as BuildFromPool;
  const buildValidator: BuildFromPool = (externalSchemas, compilerOptions) => {
    // Each plugin with schemas of its own gets an Ajv instance (two: coercing and exact) with
    // them added; on first use that happens only for the plugins whose routes run.
    let coercing: Compile | undefined;
    let exact: Compile | undefined;
    const compile = (route: Route) =>
      route.httpPart === 'body'
        ? (exact ??= pool(externalSchemas, { ...compilerOptions, customOptions: { ...compilerOptions.customOptions, coerceTypes: false } }))(route)
        : (coercing ??= pool(externalSchemas, compilerOptions))(route);
    if (!options.onFirstUse) return compile;
    return (route) => validateOnFirstUse(() => compile(route));
  };
  const serializers = SerializerSelector();
  const buildSerializer = (...args: Parameters<typeof serializers>) => {
    const compile = serializers(...args);
    if (!options.onFirstUse) return compile;
    return (route: Parameters<typeof compile>[0]): Serialize => {
      let compiled: Serialize | undefined;
      return (data) => (compiled ??= compile(route))(data);
    };
  };
  return { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory, buildSerializer } };
}
