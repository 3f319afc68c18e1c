import type { Tenant } from '../tenancy/tenant.js';
import type { FilesRepo } from '../media/files-repo.js';
import { deliveryUrl } from '../media/file-record.js';
import type { EvidenceFile, NotifiedEvent } from './notification.js';

/** A file id as DECISIONS.md §1 writes it: `f_` and a ULID. */
const fileIdPattern = /^f_[0-9A-HJKMNP-TV-Z]{26}$/;

/** Bounds of the walk through one event's payload: deep or wide payloads are read only so far. */
const maxDepth = 8;
const maxNodes = 2_000;
const maxIdsPerEvent = 10;

/** The file ids an event's payload names (top level and nested, within the bounds), in order, once each. */
export function fileIdsIn(payload: unknown): string[] {
  const found: string[] = [];
  let nodes = 0;
  const walk = (value: unknown, depth: number): void => {
    if (found.length >= maxIdsPerEvent || ++nodes > maxNodes) return;
    if (typeof value === 'string') {
      if (fileIdPattern.test(value) && !found.includes(value)) found.push(value);
    } else if (depth < maxDepth && value !== null && typeof value === 'object') {
      for (const child of Array.isArray(value) ? value : Object.values(value)) walk(child, depth + 1);
    }
  };
  walk(payload, 0);
  return found;
}

/**
 * The events with `evidence: [{id, url, filename, content_type}]` for the files their payloads
 * name (DECISIONS.md §18): resolved in one query, in the tenant's own project and mode only. A
 * file id of another tenant, unknown, deleted or blocked is left out, exactly as if absent; an
 * event that names none keeps no `evidence` key.
 */
export async function withEvidence(files: FilesRepo, tenant: Tenant, cdnUrl: string, events: readonly NotifiedEvent[]): Promise<NotifiedEvent[]> {
  const idsPerEvent = events.map((e) => fileIdsIn(e.payload));
  const rows = await files.activeByIds(tenant, [...new Set(idsPerEvent.flat())]);
  const byId = new Map<string, EvidenceFile>(
    rows.map((r) => [r.id, { id: r.id, url: deliveryUrl(cdnUrl, r.key), filename: r.original_name, content_type: r.content_type }]),
  );
  return events.map((event, i) => {
    const { evidence: _ignored, ...rest } = event;
    const evidence = idsPerEvent[i]!.flatMap((id) => byId.get(id) ?? []);
    return evidence.length ? { ...rest, evidence } : rest;
  });
}
