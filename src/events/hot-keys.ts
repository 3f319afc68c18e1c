/**
 * Which payload keys of a dataset are hot (docs/events-engine.md "Hot payload keys"):
 * the operator's pins, then the keys schema discovery sees most often as one scalar type, up to
 * 32. Kept in the dataset's metadata row (`hot_keys`, migration 0016) and handed to the event
 * store, which stores them as typed columns for the events it loads from then on
 * (engine/hot-columns.ts). Queries stay exact whatever this chooses: it only decides
 * which reads are fast.
 */
import type { Kysely } from 'kysely';
import { badRequest } from '../errors/app-error.js';
import type { Database } from '../stores/metadata/schema.js';
import type { EventStore, FieldStats, FrequentKey } from '../engine/event-store.js';
import { maxHotKeys, type HotType } from '../engine/hot-columns.js';
import { scoped } from '../tenancy/scoped.js';
import type { Tenant } from '../tenancy/tenant.js';
import { parseSoql, printField } from '../soql/index.js';
import { jsonPointer } from '../soql/scope.js';
import type { Dataset } from './dataset-service.js';

export interface HotKeyEntry {
  path: string[];
  type: HotType;
  pinned: boolean;
}

/** A key as the API shows and takes it: as it follows `payload.` in SOQL (`match.map`, `` `a.b` ``). */
export const hotKeyText = (path: readonly string[]): string => printField({ kind: 'payload', path: [...path] }).slice('payload.'.length);

/** A key of the API as its path: SOQL's field syntax; anything else is a validation_error. */
export function hotKeyPath(text: string): string[] {
  const fail = () =>
    badRequest(`"${text.slice(0, 100)}" is not a payload key: write it as after "payload." in a query (match.map, \`odd key\`)`, {
      field: 'hot_keys',
    });
  let query;
  try {
    query = parseSoql(`payload.${text} exists`);
  } catch {
    throw fail();
  }
  const f = query.filter;
  if (!f || f.type !== 'exists' || f.field.kind !== 'payload' || query.groupBy || query.stats) throw fail();
  return f.field.path;
}

/** The stored entries (a row written by this version, or null). */
export function hotKeysOf(dataset: Pick<Dataset, 'hot_keys'>): HotKeyEntry[] {
  if (!dataset.hot_keys) return [];
  try {
    const list = JSON.parse(dataset.hot_keys) as HotKeyEntry[];
    return Array.isArray(list) ? list : [];
  } catch {
    return [];
  }
}

const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((k, i) => k === b[i]);

/** A discovered key becomes hot when at least this share of the sample holds it as one type. */
export const autoShare = 0.1;

/**
 * Identifier-like: a string key whose sample shows more distinct values than this share of the
 * events holding it (player ids, steam ids, request ids). Its column barely compresses: two such
 * keys were most of what 8 hot keys cost on disk (docs/benchmarks.md, the hot-keys rows), and they
 * cost the loader and DuckDB's compression most too. Discovery
 * does not choose them on its own; a pin does, and so do queries naming them (minUses).
 */
export const identifierShare = 0.5;
/** An automatic key already hot is dropped only past this share (a key near the line does not flap). */
export const identifierDropShare = 0.75;

/** Whether the sample shows the key as identifier-like past `share` (FrequentKey.distinct; unknown: no). */
export const identifierLike = (f: FrequentKey, share = identifierShare): boolean =>
  f.type === 'string' && f.distinct !== undefined && f.distinct > f.count * share;

/** A payload key named by queries on a dataset (QueryKeyUse), with how many named it. */
export interface UsedKey {
  path: string[];
  count: number;
}

/** Queries that must have named a key before it is chosen for being used. */
export const minUses = 3;

/**
 * The next hot keys: the pins, then the automatic keys still seen in the sample (kept as they
 * were, so a key does not flap in and out, unless the sample now shows it identifier-like past
 * identifierDropShare), then the keys queries use most (`used`, named by at least minUses
 * queries, with the type the sample shows), then the most frequent new ones that are not
 * identifier-like, up to 32.
 */
export function chooseHotKeys(current: readonly HotKeyEntry[], stats: FieldStats | undefined, pins?: readonly HotKeyEntry[], used: readonly UsedKey[] = []): HotKeyEntry[] {
  const pinned = pins ?? current.filter((k) => k.pinned);
  const next: HotKeyEntry[] = pinned.map((k) => ({ path: k.path, type: k.type, pinned: true }));
  const has = (path: readonly string[]) => next.some((k) => samePath(k.path, path));
  const frequent = stats?.frequent ?? [];
  const top = frequent.slice(0, maxHotKeys);
  const wanted = used.filter((u) => u.count >= minUses).sort((a, b) => b.count - a.count);
  const seen = (path: readonly string[]) => frequent.find((f) => samePath(f.path, path));
  for (const k of current) {
    if (k.pinned || has(k.path) || next.length >= maxHotKeys) continue;
    // Without a sample (no events in 24 hours) nothing is known to be gone: keep it.
    const used = wanted.some((u) => samePath(u.path, k.path)) && seen(k.path);
    const sampled = top.find((f) => samePath(f.path, k.path));
    const stays = !stats || used || (sampled && !identifierLike(sampled, identifierDropShare));
    if (stays) next.push({ path: k.path, type: k.type, pinned: false });
  }
  for (const u of wanted) {
    if (next.length >= maxHotKeys) break;
    const f = seen(u.path);
    if (f && !has(f.path)) next.push({ path: f.path, type: f.type, pinned: false });
  }
  const least = Math.max(1, Math.ceil((stats?.sampledEvents ?? 0) * autoShare));
  for (const f of top) {
    if (next.length >= maxHotKeys) break;
    if (f.count < least || has(f.path) || identifierLike(f)) continue;
    next.push({ path: f.path, type: f.type, pinned: false });
  }
  return next;
}

/**
 * The payload keys queries name (filters, `group by`, `stats` functions and `by` fields), counted
 * per dataset in this process's memory (a restart starts again from nothing), for chooseHotKeys.
 * Bounded: at most 64 keys per dataset (past that new keys are not counted) and 10,000 datasets
 * (the oldest counted is forgotten first).
 */
export class QueryKeyUse {
  private readonly byDataset = new Map<string, Map<string, UsedKey>>();

  note(datasetIds: readonly string[], paths: readonly string[][]): void {
    if (!paths.length) return;
    for (const id of datasetIds) {
      let keys = this.byDataset.get(id);
      if (!keys) {
        if (this.byDataset.size >= 10_000) this.byDataset.delete(this.byDataset.keys().next().value!);
        this.byDataset.set(id, (keys = new Map()));
      }
      for (const path of paths) {
        const key = JSON.stringify(path);
        const entry = keys.get(key);
        if (entry) entry.count++;
        else if (keys.size < 64) keys.set(key, { path: [...path], count: 1 });
      }
    }
  }

  /** The dataset's keys named by queries, most named first. */
  of(datasetId: string): UsedKey[] {
    return [...(this.byDataset.get(datasetId)?.values() ?? [])].sort((a, b) => b.count - a.count);
  }
}

export type HotKeyPin = string | { key: string; type: HotType };

export interface ResolvedPins {
  pins: HotKeyEntry[];
  /** The discovery sample, when a pin needed it for its type. */
  sample: FieldStats | undefined;
}

export class HotKeyService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly store: EventStore,
    /** OPS_HOT_KEYS_AUTO: discovery's keys join the pins; without it only pins are hot. */
    readonly auto = true,
    /** The keys queries name (the query service counts them). */
    readonly use = new QueryKeyUse(),
  ) {}

  /**
   * The background's choice (hot-key-chooser.ts) from a sample: chooseHotKeys' keys, and every
   * key hot now stays (dropping one is left to a schema request's fresh sample, where a key
   * queries named in another process is known). Stored only if the dataset's keys are still
   * those it read (a PATCH meanwhile wins); the store is handed what is stored either way.
   */
  async chooseInBackground(tenant: Tenant, dataset: Pick<Dataset, 'id'>, stats: FieldStats): Promise<HotKeyEntry[]> {
    const stored = (await this.fresh(tenant, dataset))?.hot_keys ?? null;
    const current = hotKeysOf({ hot_keys: stored });
    let next = current;
    if (this.auto) {
      next = chooseHotKeys(current, stats, undefined, this.use.of(dataset.id));
      for (const k of current) if (next.length < maxHotKeys && !next.some((n) => samePath(n.path, k.path))) next.push(k);
    }
    if (JSON.stringify(current) !== JSON.stringify(next)) {
      const text = JSON.stringify(next);
      const updated = await scoped(this.db, tenant)
        .updateTable('datasets')
        .set({ hot_keys: text })
        .where('id', '=', dataset.id)
        .where('hot_keys', stored === null ? 'is' : '=', stored)
        .executeTakeFirst();
      if (!Number(updated.numUpdatedRows)) return this.sync(tenant, dataset);
    }
    await this.tell(dataset.id, tenant, next);
    return next;
  }

  /** Hands the dataset's stored keys to the store (another process, or a PATCH, chose them). */
  async sync(tenant: Tenant, dataset: Pick<Dataset, 'id'>): Promise<HotKeyEntry[]> {
    const keys = hotKeysOf((await this.fresh(tenant, dataset)) ?? { hot_keys: null });
    await this.tell(dataset.id, tenant, keys);
    return keys;
  }

  private tell(datasetId: string, tenant: Tenant, keys: readonly HotKeyEntry[]): Promise<void> {
    return this.store.setHotKeys(
      tenant,
      datasetId,
      keys.map((k) => ({ pointer: jsonPointer(k.path), type: k.type })),
    );
  }

  /** After schema discovery (a fresh sample): adds the keys seen most often, keeps the pins. */
  async refresh(tenant: Tenant, dataset: Dataset, stats: FieldStats): Promise<HotKeyEntry[]> {
    const current = hotKeysOf((await this.fresh(tenant, dataset)) ?? dataset);
    return this.save(tenant, dataset, current, this.choose(dataset.id, current, stats));
  }

  /** chooseHotKeys, or only the pins when discovery does not choose (an earlier automatic choice is dropped). */
  private choose(datasetId: string, current: readonly HotKeyEntry[], stats: FieldStats | undefined, pins?: readonly HotKeyEntry[]): HotKeyEntry[] {
    if (this.auto) return chooseHotKeys(current, stats, pins, this.use.of(datasetId));
    return chooseHotKeys(current.filter((k) => k.pinned), undefined, pins);
  }

  /**
   * PATCH /datasets/{name} `hot_keys`, checked before anything is written: the pins as entries.
   * A key given without a type takes the one it has as a hot key already, else the one
   * discovery sees most (`stats`); a key nobody has seen needs its type (400).
   */
  async resolvePins(tenant: Tenant, dataset: Dataset, items: readonly HotKeyPin[], stats: () => Promise<FieldStats>): Promise<ResolvedPins> {
    if (items.length > maxHotKeys) {
      throw badRequest(`at most ${maxHotKeys} hot keys per dataset; ${items.length} were given`, { field: 'hot_keys' });
    }
    const current = hotKeysOf((await this.fresh(tenant, dataset)) ?? dataset);
    let sample: FieldStats | undefined;
    const pins: HotKeyEntry[] = [];
    for (const item of items) {
      const text = typeof item === 'string' ? item : item.key;
      const path = hotKeyPath(text);
      if (pins.some((p) => samePath(p.path, path))) continue;
      let type = typeof item === 'string' ? undefined : item.type;
      type ??= current.find((k) => samePath(k.path, path))?.type;
      if (!type) {
        sample ??= await stats();
        type = sample.frequent?.find((f) => samePath(f.path, path))?.type;
      }
      if (!type) {
        throw badRequest(
          `payload key "${text.slice(0, 100)}" holds no string, number or boolean in the last 24 hours' sample: give its type, {"key": "${text.slice(0, 100)}", "type": "number"}`,
          { field: 'hot_keys' },
        );
      }
      pins.push({ path, type, pinned: true });
    }
    return { pins, sample };
  }

  /** The pins become exactly these (resolvePins); discovery's keys fill the rest (OPS_HOT_KEYS_AUTO). */
  async pin(tenant: Tenant, dataset: Dataset, { pins, sample }: ResolvedPins): Promise<HotKeyEntry[]> {
    const current = hotKeysOf((await this.fresh(tenant, dataset)) ?? dataset);
    return this.save(tenant, dataset, current, this.choose(dataset.id, current, sample, pins));
  }

  private fresh(tenant: Tenant, dataset: Pick<Dataset, 'id'>): Promise<Pick<Dataset, 'hot_keys'> | undefined> {
    return scoped(this.db, tenant).selectFrom('datasets').select('hot_keys').where('id', '=', dataset.id).executeTakeFirst();
  }

  /** Stores the choice when it changed, and always tells the store (a no-op there when it has it). */
  private async save(tenant: Tenant, dataset: Dataset, current: readonly HotKeyEntry[], next: HotKeyEntry[]): Promise<HotKeyEntry[]> {
    if (JSON.stringify(current) !== JSON.stringify(next)) {
      await scoped(this.db, tenant).updateTable('datasets').set({ hot_keys: JSON.stringify(next) }).where('id', '=', dataset.id).execute();
    }
    await this.tell(dataset.id, tenant, next);
    return next;
  }
}

/** The API's view of a dataset's hot keys. */
export const hotKeysView = (keys: readonly HotKeyEntry[]) => keys.map((k) => ({ key: hotKeyText(k.path), type: k.type, pinned: k.pinned }));
