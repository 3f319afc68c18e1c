import type { Table } from '../app/command.js';

/** A value as a person reads it: lists comma-separated, nothing as "-". */
function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.length ? value.map(cell).join(', ') : '-';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `key: value` lines: the text output of a command whose result is one object. */
export function keyValues(result: object): string {
  return Object.entries(result)
    .map(([key, value]) => `${key}: ${cell(value)}`)
    .join('\n');
}

/** Aligned columns under a header line, one line per row; "(none)" for an empty list. */
export function table(result: Record<string, unknown>, spec: Table): string {
  const rows = (result[spec.list] as Array<Record<string, unknown>> | undefined) ?? [];
  const lines = [spec.columns.map(([header]) => header), ...rows.map((row) => spec.columns.map(([, read]) => cell(read(row))))];
  const widths = spec.columns.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  const text = lines.map((line) => line.map((value, i) => (i === line.length - 1 ? value : value.padEnd(widths[i]!))).join('  '));
  if (rows.length === 0) text.push(`(no ${spec.list})`);
  return text.join('\n');
}
