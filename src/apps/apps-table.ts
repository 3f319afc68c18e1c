/** SPEC.md §2.9 as stored; `name` is unique per project and mode. */
export interface AppsTable {
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  name: string;
  description: string;
  created_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    apps: AppsTable;
  }
}
