import type { SoqlQuery } from '../soql/index.js';
import { printSoql } from '../soql/index.js';

/** The dashboard's explorer on the monitor's filter and window (the URL a notification links). */
export function explorerUrl(api: string, query: SoqlQuery, from: number, to: number): string {
  const params = new URLSearchParams({ q: printSoql({ filter: query.filter, groupBy: null }), range: 'custom', from: new Date(from).toISOString(), to: new Date(to).toISOString() });
  return `${api}/dashboard/?${params.toString()}`;
}
