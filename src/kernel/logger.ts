import type { FastifyBaseLogger } from 'fastify';
import pino, { type DestinationStream, type LoggerOptions } from 'pino';
import { redactingLogger } from '../http/redact.js';

/** The process's pino logger, as Fastify types it (so a listener's `log` is one too). */
export type Logger = FastifyBaseLogger;

/** pino options, and where to write (default stdout). */
export interface LoggerSettings extends LoggerOptions {
  stream?: DestinationStream;
}

/**
 * One logger per process: both listeners log through children of it, and capabilities get it
 * from open() for what they do outside a request (background jobs, live tail's feeds). Its
 * serializers never write a token (redactingLogger). `false` is silence.
 */
export function createLogger(settings: LoggerSettings | false): Logger {
  if (settings === false) return pino({ enabled: false });
  const { stream, ...options } = settings;
  return stream ? pino(redactingLogger(options) as LoggerOptions, stream) : pino(redactingLogger(options) as LoggerOptions);
}

/**
 * A Fastify instance's logging options for `log`. A silent logger is no logger at all: Fastify
 * then makes no child logger per request.
 */
export function fastifyLogging(log: Logger): { logger: false } | { loggerInstance: Logger } {
  return log.level === 'silent' ? { logger: false } : { loggerInstance: log };
}
