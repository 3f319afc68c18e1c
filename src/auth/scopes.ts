/** SPEC.md §5. */
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
] as const;

export type Scope = (typeof scopes)[number];

export const isScope = (value: string): value is Scope => (scopes as readonly string[]).includes(value);
