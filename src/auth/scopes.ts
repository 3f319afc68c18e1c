/** SPEC.md §5, with DECISIONS.md §18's monitors:read / monitors:write (monitors and their notification channels) and §20's audit:read (the audit log: Owner and Admin). */
export const scopes = [
  'media:read',
  'media:write',
  'logs:read',
  'logs:write',
  'cases:read',
  'cases:write',
  'apps:read',
  'apps:write',
  'usage:read',
  'members:read',
  'members:write',
  'billing:read',
  'tokens:write',
  'monitors:read',
  'monitors:write',
  'audit:read',
] as const;

export type Scope = (typeof scopes)[number];

export const isScope = (value: string): value is Scope => (scopes as readonly string[]).includes(value);
