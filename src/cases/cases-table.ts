/** SPEC.md §2.8 as stored. */
export type CaseStatus = 'open' | 'closed' | 'archived';
export const caseStatuses = ['open', 'closed', 'archived'] as const;

export interface CasesTable {
  id: string;
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  title: string;
  description: string;
  status: CaseStatus;
  created_at: string;
  updated_at: string;
}

/** One file attached to one case; served only while the file is active. */
export interface CaseAttachmentsTable {
  org_id: string;
  project_id: string;
  mode: 'live' | 'test';
  case_id: string;
  file_id: string;
  attached_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    cases: CasesTable;
    case_attachments: CaseAttachmentsTable;
  }
}
