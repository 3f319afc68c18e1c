import type { FieldStat, FrequentKey } from './event-store.js';
import { maxHotKeys } from './hot-columns.js';

/** The hot-key candidates a sample keeps (FieldStats.frequent), most frequent first. */
export const frequentKeysKept = 4 * maxHotKeys;

/**
 * Bounds of schema discovery (docs/decisions.md, "Hardening: event bounds"): whatever is
 * stored, one discovery reads at most `sampleEvents` events and `sampleBytes` of payload text
 * (the newest of the window), follows nesting `depth` levels (the payload object is level 1)
 * and collects at most `paths` distinct paths. Its memory is a small multiple of the sample.
 */
export const fieldStatsLimits = { sampleEvents: 2_000, sampleBytes: 2_000_000, depth: 32, paths: 1_000 } as const;

/**
 * The seq range of the sample: from the newest event back while the sizes fit `sampleBytes`
 * (at least one event). `sizes` are [seq, bytes], newest first; undefined when empty.
 */
export function sampleRange<S>(sizes: ReadonlyArray<readonly [S, number]>): { from: S; to: S } | undefined {
  if (sizes.length === 0) return undefined;
  const to = sizes[0]![0];
  let from = to;
  let bytes = 0;
  let count = 0;
  for (const [seq, size] of sizes) {
    bytes += size;
    if (count > 0 && bytes > fieldStatsLimits.sampleBytes) break;
    from = seq;
    count++;
  }
  return { from, to };
}

interface PathStats {
  /** The path's keys (a dot path may be two different paths: `a.b` and `a` → `b`; then null). */
  path: string[] | null;
  /** Events holding a string, a number, a boolean there (hot keys: hot-columns.ts). */
  strings: number;
  numbers: number;
  booleans: number;
  /** Distinct values, as `s` + string or `j` + JSON text. */
  values: Set<string>;
  /** The first distinct values seen (newest events first), as strings. */
  samples: string[];
}

/** An array nested at most `levels` levels below and including itself (so JSON.stringify is safe). */
function shallow(value: unknown, levels: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  if (levels <= 0) return false;
  if (Array.isArray(value)) return value.every((v) => shallow(v, levels - 1));
  for (const key in value) if (!shallow((value as Record<string, unknown>)[key], levels - 1)) return false;
  return true;
}

/**
 * Payload fields from payload texts (newest first): leaf dot paths (arrays and scalars are
 * leaves; nested objects flatten to `match.map`), ranked by distinct values in the sample,
 * then by key; up to `maxSamples` values each, as strings, sorted. Keys holding `"` or `\`
 * (or empty) are skipped. `truncated` when a bound left something out.
 */
export function discoverFields(
  payloads: Iterable<string>,
  maxKeys: number,
  maxSamples: number,
): { fields: FieldStat[]; truncated: boolean; frequent: FrequentKey[] } {
  const paths = new Map<string, PathStats>();
  let truncated = false;

  const record = (path: string, keys: string[], value: unknown, depth: number) => {
    let stats = paths.get(path);
    if (!stats) {
      if (paths.size >= fieldStatsLimits.paths) {
        truncated = true;
        return;
      }
      stats = { path: keys, strings: 0, numbers: 0, booleans: 0, values: new Set(), samples: [] };
      paths.set(path, stats);
    } else if (stats.path && (stats.path.length !== keys.length || stats.path.some((k, i) => k !== keys[i]))) {
      stats.path = null;
    }
    if (typeof value === 'string') stats.strings++;
    else if (typeof value === 'number') stats.numbers++;
    else if (typeof value === 'boolean') stats.booleans++;
    if (value === null) return;
    let text: string;
    if (typeof value === 'string') {
      text = value;
      stats.values.add(`s${value}`);
    } else {
      if (!shallow(value, fieldStatsLimits.depth - depth + 1)) {
        truncated = true;
        return;
      }
      text = JSON.stringify(value);
      stats.values.add(`j${text}`);
    }
    if (stats.samples.length < maxSamples && !stats.samples.includes(text)) stats.samples.push(text);
  };

  const walk = (object: Record<string, unknown>, prefix: string, keys: string[], depth: number) => {
    for (const key in object) {
      if (key === '' || key.includes('"') || key.includes('\\')) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      const value = object[key];
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        if (depth >= fieldStatsLimits.depth) truncated = true;
        else walk(value as Record<string, unknown>, path, [...keys, key], depth + 1);
      } else {
        record(path, [...keys, key], value, depth + 1);
      }
    }
  };

  for (const text of payloads) {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof payload === 'object' && payload !== null && !Array.isArray(payload)) walk(payload as Record<string, unknown>, '', [], 1);
  }

  // The keys held most often as one scalar type: hot-key candidates (events/hot-keys.ts).
  const frequent: FrequentKey[] = [...paths]
    .flatMap(([key, s]): FrequentKey[] => {
      if (!s.path) return [];
      const [type, count] = ([['string', s.strings], ['number', s.numbers], ['boolean', s.booleans]] as const).reduce((a, b) => (b[1] > a[1] ? b : a));
      return count > 0 ? [{ key, path: s.path, type, count, distinct: s.values.size }] : [];
    })
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    // More than the 32 hot keys: a key queries use may be hot though others are more frequent.
    .slice(0, frequentKeysKept);

  const ranked = [...paths]
    .map(([key, stats]) => ({ key, cardinality: stats.values.size, samples: stats.samples }))
    .sort((a, b) => b.cardinality - a.cardinality || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .slice(0, maxKeys);
  return { fields: ranked.map((f) => ({ ...f, samples: [...f.samples].sort() })), truncated, frequent };
}
