/** One uploaded file (SPEC.md §2.1); `tags` is a JSON array of strings. */
export interface FilesTable {
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  key: string;
  size: number;
  content_type: string;
  sha256: string;
  original_name: string;
  tags: string;
  folder: string;
  abuse_status: 'pending' | 'clean' | 'flagged' | 'blocked';
  visibility: 'public';
  storage_class: 'standard';
  created_at: string;
  updated_at: string;
  /** Set by DELETE; the row stays (and the URL keeps working) until `purges_at`. */
  deleted_at: string | null;
  purges_at: string | null;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    files: FilesTable;
  }
}
