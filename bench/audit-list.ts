// npx tsx bench/audit-list.ts — what one page of GET /v1/orgs/{orgId}/audit costs on SQLite
// (AuditService.list, no HTTP), for a busy organisation and for a sparse one among busy ones, the
// worst case of the bound on the rows a page reads (16 blocks of 1,024: docs/audit.md, "Order
// and layout"). ENTRIES (default 100,000) over a busy organisation (one in 2), ten others, and a
// sparse one (one in 1,100: each of its entries alone in its block). Wall time per page, medians.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openMetadataStore } from '../src/stores/metadata/database.js';
import { audit, type AuditChange } from '../src/audit/record.js';
import { AuditService } from '../src/audit/audit-service.js';
import { systemClock } from '../src/shared/clock.js';
import { fmt, median } from './support.js';

const total = Number(process.env.ENTRIES ?? 100_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-list-'));
const store = await openMetadataStore({ databaseUrl: undefined, dataDir: dir });
const origin = { actor: { type: 'token' as const, id: 'tok_bench', name: 'bench' }, requestId: 'req_bench', ip: '127.0.0.1', userAgent: 'bench/1' };
const orgOf = (i: number) => (i % 1100 === 550 ? 'sparse' : i % 2 === 0 ? 'busy' : `other${i % 10}`);
const t0 = Date.now() - 86_400_000;
for (let i = 0; i < total; i += 1000) {
  const changes: AuditChange[] = [];
  for (let j = i; j < Math.min(total, i + 1000); j++) changes.push({ action: 'token.create', origin, orgId: orgOf(j), target: { type: 'token', id: `t${j}` }, at: t0 + j, details: { name: 'bench' } });
  await store.db.transaction().execute((trx) => audit.recordAll(trx, changes));
}
const service = new AuditService(store.db, systemClock);
async function time(name: string, org: string, filter = {}): Promise<void> {
  const ms: number[] = [];
  let entries = 0;
  for (let r = 0; r < 30; r++) {
    const started = process.hrtime.bigint();
    entries = (await service.list(org, filter, { limit: 50, after: undefined })).entries.length;
    ms.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  console.log(`  ${name.padEnd(44)} ${fmt(median(ms.slice(5)), 2).padStart(7)} ms per page (${entries} entries)`);
}
console.log(`audit-list — ${fmt(total)} entries, first page of 50, median of 25 after 5 warm, load average ${os.loadavg().map((l) => fmt(l, 2)).join(' ')}`);
await time('busy organisation (1 in 2)', 'busy');
await time('busy, a filter matching none (16 blocks)', 'busy', { actor: 'tok_nobody' });
await time('sparse organisation (1 in 1,100: 16 blocks)', 'sparse');
await store.close();
fs.rmSync(dir, { recursive: true, force: true });
