import type { CompiledFilter, LoadedPositions, SqlDialect } from './event-store.js';

export type { LoadedPositions };

const logIdPattern = /^(?:[0-9a-f]{16})?$/;

/**
 * The events loaded at `positions` (`loaded`), or those not loaded then (`!loaded`), as a
 * condition on the `events` table. A log missing from `positions` had none loaded.
 */
export function loadedAt(positions: LoadedPositions, dialect: SqlDialect, loaded = true): CompiledFilter {
  const logs = Object.entries(positions);
  const op = loaded ? '<=' : '>';
  if (dialect === 'duckdb') {
    // One log on the embedded engine (and an events node): its id is ''.
    if (logs.some(([log]) => log !== '')) throw new Error(`a one-log engine has no log ${JSON.stringify(logs.map(([log]) => log))}`);
    return { where: `seq ${op} ?`, params: [positions[''] ?? 0] };
  }
  for (const [log, seq] of logs) {
    if (!logIdPattern.test(log) || !Number.isSafeInteger(seq) || seq < 0) throw new Error(`not a loaded position: ${JSON.stringify([log, seq])}`);
  }
  if (!logs.length) return { where: `seq ${op} 0`, params: [] };
  // multiIf(log_id = ?, seq, …, 0): the log's position, 0 for a log not named.
  const position = `multiIf(${logs.map(() => 'log_id = ?, ?').join(', ')}, 0)`;
  return { where: `seq ${op} ${position}`, params: logs.flatMap(([log, seq]) => [log, seq]) };
}

/**
 * The events loaded at `now` and not at `was` (`was` ≤ `now` for every log), or undefined when
 * no log moved on (there are none). On ClickHouse with a PREWHERE of the logs' seq ranges alone:
 * the exact condition compares each row's log id, which 18.16 does for every row of the window
 * (more than the whole statement costs), while the ranges let through only the rows whose seq
 * falls in some log's new range — a minute's loads, whatever the window.
 */
export function loadedBetween(was: LoadedPositions, now: LoadedPositions, dialect: SqlDialect): CompiledFilter | undefined {
  const moved = movedOn(was, now);
  if (!moved.length) return undefined;
  const after = loadedAt(was, dialect, false);
  const upTo = loadedAt(now, dialect);
  const exact = { where: `${after.where} AND ${upTo.where}`, params: [...after.params, ...upTo.params] };
  if (dialect !== 'clickhouse') return exact;
  const ranges = moved.map(([log, seq]) => `(seq > ${was[log] ?? 0} AND seq <= ${seq})`);
  return { ...exact, prewhere: { where: ranges.join(' OR '), params: [] } };
}

/** The logs `now` is past `was` on, with their seq at `now`. */
export const movedOn = (was: LoadedPositions, now: LoadedPositions): Array<[string, number]> => Object.entries(now).filter(([log, seq]) => seq > (was[log] ?? 0));

/** Positions past both (each log at the further of the two): loaded positions only move on. */
export function furthest(a: LoadedPositions, b: LoadedPositions): LoadedPositions {
  const out: Record<string, number> = { ...a };
  for (const [log, seq] of Object.entries(b)) out[log] = Math.max(out[log] ?? 0, seq);
  return out;
}
