import pino from 'pino';
import type { Config } from '../config/config.js';
import { createLogger, type Logger } from './logger.js';

/** The logger capabilities opened by opsctl get: stderr, so stdout keeps its one JSON object. */
export const cliLogger = (config: Pick<Config, 'logLevel'>): Logger => createLogger({ level: config.logLevel, stream: pino.destination(2) });
