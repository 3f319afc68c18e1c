import type { Logger } from '../kernel/logger.js';
import { LocalBus, type Bus } from './bus.js';

/**
 * The bus the configuration asks for: NATS when OPS_NATS_URL is set (the client loaded only
 * then), otherwise this process only. Connects on first use, never blocking (nats-bus.ts).
 */
export async function openBus(natsUrl: string | undefined, log: Logger | undefined): Promise<Bus> {
  if (!natsUrl) return new LocalBus((error, topic) => log?.warn({ err: error }, `bus: a ${topic} subscriber failed`));
  if (!log) throw new Error('openBus: a NATS bus needs a logger');
  const { NatsBus } = await import('./nats-bus.js');
  return new NatsBus({ url: natsUrl, log });
}
