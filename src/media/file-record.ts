import type { FilesTable } from './files-table.js';
import './files-table.js';

/** SPEC.md §2.1 as served: both described shapes merged (DECISIONS.md §7). */
export interface FileView {
  id: string;
  url: string;
  key: string;
  size: number;
  content_type: string;
  sha256: string;
  original_name: string;
  filename: string;
  org_id: string;
  tags: string[];
  folder: string;
  abuse_status: string;
  visibility: string;
  storage_class: string;
  created_at: string;
  updated_at: string;
}

/** The delivery URL of a key: every path segment encoded, under {cdn_url}. */
export const deliveryUrl = (cdnUrl: string, key: string): string => `${cdnUrl.replace(/\/+$/, '')}/${key.split('/').map(encodeURIComponent).join('/')}`;

export function toView(row: FilesTable, cdnUrl: string): FileView {
  return {
    id: row.id,
    url: deliveryUrl(cdnUrl, row.key),
    key: row.key,
    size: Number(row.size),
    content_type: row.content_type,
    sha256: row.sha256,
    original_name: row.original_name,
    filename: row.original_name,
    org_id: row.org_id,
    tags: JSON.parse(row.tags) as string[],
    folder: row.folder,
    abuse_status: row.abuse_status,
    visibility: row.visibility,
    storage_class: row.storage_class,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const sharedViews = new WeakMap<FilesTable, { cdnUrl: string; view: FileView }>();

/**
 * toView of a row shared between requests (a read-mostly list's rows), made once per row and
 * delivery address and shared as well: a page of files is listed far more often than its rows
 * change, and building each view (its URL, its parsed tags) cost more than serving it. The view
 * must not be modified.
 */
export function sharedView(row: FilesTable, cdnUrl: string): FileView {
  const known = sharedViews.get(row);
  if (known?.cdnUrl === cdnUrl) return known.view;
  const view = toView(row, cdnUrl);
  sharedViews.set(row, { cdnUrl, view });
  return view;
}
