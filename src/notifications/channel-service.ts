import type { Kysely } from 'kysely';
import type { Database } from '../stores/metadata/schema.js';
import type { Tenant } from '../tenancy/tenant.js';
import { scoped } from '../tenancy/scoped.js';
import { notFound } from '../errors/app-error.js';
import { newId } from '../shared/ids.js';
import { iso, type Clock } from '../shared/clock.js';
import type { PageRequest } from '../pagination/page.js';
import { keysetBefore } from '../pagination/keyset.js';
import { acceptChannelUrl, shownUrl } from './channel-url.js';
import { newSigningSecret } from './signature.js';
import type { ChannelKind } from './notification.js';
import type { ChannelsTable } from './tables.js';
import './tables.js';
import { audit, inTenant } from '../audit/record.js';

/** A channel as the API shows it: never the signing secret, Discord and Slack URLs masked. */
export interface ChannelView {
  id: string;
  name: string;
  kind: ChannelKind;
  url: string;
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

export interface ChannelPatch {
  name?: string;
  url?: string;
  enabled?: boolean;
}

export const toChannelView = (row: ChannelsTable): ChannelView => ({
  id: row.id,
  name: row.name,
  kind: row.kind,
  url: shownUrl(row.kind, row.url),
  enabled: row.enabled === 1,
  disabled_reason: row.disabled_reason,
  consecutive_failures: row.consecutive_failures,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** Channels of a project and mode (DECISIONS.md §18), always through scoped(). */
export class ChannelService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly allowPrivate: boolean,
  ) {}

  /** A new channel; a webhook channel's signing secret is in the answer, and only there. */
  async create(tenant: Tenant, input: { name: string; kind: ChannelKind; url: string }): Promise<ChannelView & { signing_secret?: string }> {
    const url = await acceptChannelUrl(input.url, this.allowPrivate);
    const now = iso(this.clock.now());
    const row: ChannelsTable = {
      id: newId.channel(),
      ...scoped(this.db, tenant).row,
      name: input.name,
      kind: input.kind,
      url,
      signing_secret: input.kind === 'webhook' ? newSigningSecret() : null,
      enabled: 1,
      disabled_reason: null,
      consecutive_failures: 0,
      not_before: null,
      created_at: now,
      updated_at: now,
    };
    await this.db.transaction().execute(async (trx) => {
      await trx.insertInto('channels').values(row).execute();
      // Never the URL (Discord and Slack URLs are credentials) nor the signing secret.
      await audit.record(trx, { action: 'channel.create', ...inTenant(tenant), target: { type: 'channel', id: row.id }, at: Date.parse(now), details: { name: row.name, kind: row.kind } });
    });
    return { ...toChannelView(row), ...(row.signing_secret ? { signing_secret: row.signing_secret } : {}) };
  }

  async get(tenant: Tenant, id: string): Promise<ChannelsTable> {
    const row = await scoped(this.db, tenant).selectFrom('channels').selectAll().where('id', '=', id).executeTakeFirst();
    if (!row) throw notFound(`no channel ${id}`);
    return row;
  }

  /** The tenant's channels among `ids` (unknown and foreign ids are left out). */
  async some(tenant: Tenant, ids: readonly string[]): Promise<ChannelsTable[]> {
    if (!ids.length) return [];
    return scoped(this.db, tenant).selectFrom('channels').selectAll().where('id', 'in', [...ids]).execute();
  }

  /** Newest first, `limit + 1` rows after the page's position. */
  async list(tenant: Tenant, page: PageRequest): Promise<ChannelsTable[]> {
    let query = scoped(this.db, tenant).selectFrom('channels').selectAll();
    if (page.after) query = query.where(keysetBefore('created_at', 'id', page.after));
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit + 1).execute();
  }

  /** Renames, points elsewhere (checked as at creation), disables or re-enables (which forgets the failures). */
  async update(tenant: Tenant, id: string, patch: ChannelPatch): Promise<ChannelsTable> {
    const row = await this.get(tenant, id);
    const changes: Partial<ChannelsTable> = { updated_at: iso(this.clock.now()) };
    if (patch.name !== undefined) changes.name = patch.name;
    if (patch.url !== undefined) changes.url = await acceptChannelUrl(patch.url, this.allowPrivate);
    if (patch.enabled === true) Object.assign(changes, { enabled: 1, disabled_reason: null, consecutive_failures: 0 });
    if (patch.enabled === false && row.enabled === 1) Object.assign(changes, { enabled: 0, disabled_reason: 'disabled by a user' });
    await this.db.transaction().execute(async (trx) => {
      await scoped(trx, tenant).updateTable('channels').set(changes).where('id', '=', id).execute();
      // Which fields changed, not their values: a new URL is a credential.
      await audit.record(trx, {
        action: 'channel.update',
        ...inTenant(tenant),
        target: { type: 'channel', id },
        at: Date.parse(changes.updated_at!),
        details: { name: changes.name ?? row.name, fields: Object.keys(patch), ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}) },
      });
    });
    return { ...row, ...changes };
  }

  /** Deletes the channel; its notifications still pending are marked failed when their turn comes. */
  async remove(tenant: Tenant, id: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const row = await scoped(trx, tenant).selectFrom('channels').select(['name', 'kind']).where('id', '=', id).executeTakeFirst();
      const result = await scoped(trx, tenant).deleteFrom('channels').where('id', '=', id).executeTakeFirst();
      if (!row || Number(result.numDeletedRows) !== 1) throw notFound(`no channel ${id}`);
      await audit.record(trx, { action: 'channel.delete', ...inTenant(tenant), target: { type: 'channel', id }, at: this.clock.now(), details: { name: row.name, kind: row.kind } });
    });
  }
}
