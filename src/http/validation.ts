import type { FastifyServerOptions } from 'fastify';
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler';

type CompilerOptions = { customOptions?: Record<string, unknown> };
type Compile = (route: { httpPart?: string }) => unknown;
type BuildFromPool = (externalSchemas: Record<string, unknown>, options: CompilerOptions) => Compile;

/**
 * Fastify's validator with one change: JSON bodies are never type-coerced. By default Ajv turns
 * `{"name": 123}` into "123" and `{"scopes": "all"}` into ["all"], so a client's wrong type is
 * answered as if it were right. A body must carry the declared types (400 naming the field
 * otherwise); path, query string and headers are text on the wire and are still parsed into
 * the numbers and booleans their schemas declare.
 */
export function exactBodyValidation(): NonNullable<FastifyServerOptions['schemaController']> {
  const pool = AjvCompiler() as unknown as BuildFromPool;
  const buildValidator: BuildFromPool = (externalSchemas, options) => {
    const coercing = pool(externalSchemas, options);
    const exact = pool(externalSchemas, { ...options, customOptions: { ...options.customOptions, coerceTypes: false } });
    return (route) => (route.httpPart === 'body' ? exact(route) : coercing(route));
  };
  return { compilersFactory: { buildValidator: buildValidator as unknown as ValidatorFactory } };
}
