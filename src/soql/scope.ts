/**
 * What a query names beyond its own events: the datasets (by name, resolved against the tenant's
 * active ones: not_found for an unknown name, alike on every path), the rows it can read at all
 * (its top-level `dataset:` and lower `ts` conditions), and a payload path as the RFC 6901 JSON
 * pointer every engine and the hot keys name it by.
 */
import { AppError } from '../errors/app-error.js';
import type { CompareOp, Expr, SoqlQuery, Value } from './ast.js';
import { resolveTime } from './literals.js';
import { compareCodePoints } from './text.js';

/** A JSON pointer (RFC 6901) for a payload path; DuckDB's JSON functions accept it as the path. */
export const jsonPointer = (path: readonly string[]): string =>
  path.map((k) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/**
 * dataset_ids the comparison `dataset <op> name` selects; not_found for an unknown name. Shared
 * by both engines' compilers, so both answer 404 alike.
 */
export function datasetIdsFor(map: ReadonlyMap<string, string>, op: CompareOp, name: string): string[] {
  const ids: string[] = [];
  const lower = name.toLowerCase();
  for (const [n, id] of map) {
    const hit =
      op === ':' || op === '!:' ? n.toLowerCase() === lower
      : op === '==' || op === '!=' ? n === name
      : ordered(op, compareCodePoints(n, name));
    if (hit) ids.push(id);
  }
  if (ids.length === 0 && !['>', '>=', '<', '<='].includes(op)) {
    throw new AppError('not_found', `dataset "${name}" does not exist`);
  }
  return ids;
}

const ordered = (op: CompareOp, sign: number): boolean =>
  op === '>' ? sign > 0 : op === '>=' ? sign >= 0 : op === '<' ? sign < 0 : sign <= 0;

/**
 * Throws not_found when the query names a dataset (with `:`, `==`, `!=`, `!:` or `in`) that is
 * not in the map. The engines' compilers do this themselves; live tail, which evaluates in memory,
 * calls it with the same map so both answer 404 alike.
 */
export function assertDatasetsExist(query: SoqlQuery, datasetIds: ReadonlyMap<string, string>): void {
  const visit = (e: Expr): void => {
    switch (e.type) {
      case 'and':
      case 'or':
        e.items.forEach(visit);
        return;
      case 'not':
        visit(e.expr);
        return;
      case 'compare':
      case 'in': {
        if (e.field.kind !== 'canonical' || e.field.name !== 'dataset') return;
        const op = e.type === 'compare' ? e.op : '==';
        for (const v of e.type === 'compare' ? [e.value] : e.values) {
          if (v.type === 'text') datasetIdsFor(datasetIds, op, v.text);
        }
        return;
      }
      default:
        return;
    }
  };
  if (query.filter) visit(query.filter);
}

/** The rows a query can read: these datasets' rows with ts ≥ sinceMs (top-level conditions only). */
export interface ReadScope {
  datasetIds: readonly string[];
  sinceMs: number;
}

/** The scope of a query over the tenant's active datasets (name → id). */
export function readScope(query: SoqlQuery, ctx: { now: number; datasetIds: ReadonlyMap<string, string> }): ReadScope {
  let ids = new Set(ctx.datasetIds.values());
  let sinceMs = -Infinity;
  const items: Expr[] = !query.filter ? [] : query.filter.type === 'and' ? query.filter.items : [query.filter];
  for (const e of items) {
    if ((e.type !== 'compare' && e.type !== 'in') || e.field.kind !== 'canonical') continue;
    const compares: Array<{ op: CompareOp; value: Value }> = e.type === 'compare' ? [e] : e.values.map((value) => ({ op: '==', value }));
    const name = e.field.name;
    if (name === 'dataset') {
      const named = new Set<string>();
      for (const c of compares) {
        if (c.value.type !== 'text') return { datasetIds: [...ids], sinceMs };
        let hit: string[];
        try {
          hit = datasetIdsFor(ctx.datasetIds, c.op, c.value.text);
        } catch {
          hit = []; // not_found: the compiler says so
        }
        const negated = c.op === '!=' || c.op === '!:';
        for (const id of negated ? [...ctx.datasetIds.values()].filter((d) => !hit.includes(d)) : hit) named.add(id);
      }
      ids = new Set([...ids].filter((id) => named.has(id)));
    } else if (name === 'ts' && e.type === 'compare' && e.value.type === 'time' && (e.op === '>=' || e.op === '>')) {
      sinceMs = Math.max(sinceMs, resolveTime(e.value.time, ctx.now));
    }
  }
  return { datasetIds: [...ids], sinceMs };
}
