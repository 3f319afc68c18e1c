import type { Tenant } from '../tenancy/tenant.js';
import { nameDatasets, type DatasetNameResolver } from './event-store.js';
import type { StoredEvent } from '../shared/event-record.js';

/**
 * Pages of events with their datasets named, kept with the page the engine answered: a page
 * served again (logged-event-store.ts and remote-event-store.ts keep pages while the tenant's
 * events are unchanged) is named again only when the names of its datasets changed (a rename),
 * instead of copying and naming its 100 events on every request.
 *
 * The events handed out are shared by every request that gets the same page: callers read
 * them and never change them (POST /query writes them out, the logs routes map them).
 */
export class NamedPages {
  private readonly named = new WeakMap<readonly StoredEvent[], { signature: string; events: StoredEvent[] }>();

  constructor(private readonly names: DatasetNameResolver) {}

  /** `events` (dataset ids, as the engine answered) with dataset names, from `known` where it has every id. */
  async of(tenant: Tenant, events: readonly StoredEvent[], known?: ReadonlyMap<string, string>): Promise<StoredEvent[]> {
    const ids = new Set<string>();
    for (const e of events) ids.add(e.dataset);
    const found = known && [...ids].every((id) => known.has(id)) ? known : ids.size ? await this.names(tenant, [...ids]) : new Map<string, string>();
    let signature = '';
    for (const id of ids) signature += `${id}=${found.get(id) ?? ''};`;
    const kept = this.named.get(events);
    if (kept?.signature === signature) return kept.events;
    const copies = await nameDatasets(tenant, events.map((e) => ({ ...e })), this.names, found);
    this.named.set(events, { signature, events: copies });
    return copies;
  }
}
