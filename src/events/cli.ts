import fs from 'node:fs';
import path from 'node:path';
import type { Command } from '../app/command.js';
import { str } from '../app/command.js';
import { badRequest } from '../errors/app-error.js';
import { readOrCreateLogId } from '../engine/wal/log-id.js';

/**
 * `opsctl events replay --dir DIR`: loads the write-ahead log of an events directory into
 * ClickHouse (OPS_EVENTS_URL=clickhouse://…). For a host that never comes back (docs/deploy.md,
 * "A host that never comes back"): its OPS_DATA_DIR/events copied here, every acknowledged event
 * of it is stored, exactly once whatever was loaded before, since the log keeps its id and
 * ClickHouse its loaded position. A process that restarts on its own directory does this itself.
 */
export const eventsCommands: Command[] = [
  {
    name: 'events replay',
    summary: "Load an ingester's write-ahead log (an OPS_DATA_DIR/events copied from a host that is gone) into ClickHouse; prints {dir, log_id, position}.",
    options: {
      dir: { type: 'string', value: 'DIR', required: true, description: 'the events directory: the one holding wal/ and log-id' },
    },
    async run(ctx, f) {
      const clickhouseUrl = ctx.config.eventsClickHouseUrl;
      if (!clickhouseUrl) throw badRequest('events replay loads a log into ClickHouse: set OPS_EVENTS_URL=clickhouse://… as on the API hosts');
      const dir = path.resolve(str(f, 'dir'));
      if (!fs.existsSync(path.join(dir, 'wal')) && !fs.existsSync(path.join(dir, 'log-id'))) {
        throw badRequest(`${dir} is not an events directory (no wal/ or log-id in it): name the host's OPS_DATA_DIR/events (or events-N of a worker)`);
      }
      // Loaded here: every other command starts faster without the engine's modules.
      const { openEventStore } = await import('../engine/open-event-store.js');
      const errors: string[] = [];
      // Opening loads the whole log (catch-up) before it returns; closing waits for the rest.
      const store = await openEventStore({
        dir,
        clickhouseUrl,
        names: async () => new Map(),
        now: () => ctx.clock.now(),
        log: (_level, message, error) => errors.push(`${message}${error instanceof Error ? `: ${error.message}` : ''}`),
      });
      const position = await store.lastSeq();
      await store.close();
      if (errors.length) throw new Error(`the log could not be loaded whole: ${errors[0]}`);
      return { dir, log_id: readOrCreateLogId(dir), position };
    },
  },
];
