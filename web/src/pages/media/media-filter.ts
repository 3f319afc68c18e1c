// The Media page's filter (view, folder, tag), kept in the page's address, and small words.
import type { Route } from '../../router';
import type { MediaFile } from './media-upload';

export interface Filter {
  view: 'active' | 'deleted';
  folder: string;
  tag: string;
}

export function filterOf(route: Route): Filter {
  return {
    view: route.query.get('view') === 'deleted' ? 'deleted' : 'active',
    folder: route.query.get('folder') ?? '',
    tag: route.query.get('tag') ?? '',
  };
}

export function hrefOf(filter: Partial<Filter>): string {
  const q = new URLSearchParams();
  if (filter.view === 'deleted') q.set('view', 'deleted');
  if (filter.folder) q.set('folder', filter.folder);
  if (filter.tag) q.set('tag', filter.tag);
  const s = q.toString();
  return s ? `/media?${s}` : '/media';
}

export function matches(file: MediaFile, filter: Filter): boolean {
  return filter.view === 'active' && (!filter.folder || file.folder === filter.folder) && (!filter.tag || file.tags.includes(filter.tag));
}

export function describeFilter(filter: Filter): string {
  const parts = [filter.folder && `in folder “${filter.folder}”`, filter.tag && `tagged “${filter.tag}”`].filter(Boolean);
  return parts.length ? ` ${parts.join(' and ')}` : '';
}

export function formatWhen(iso: string | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}
