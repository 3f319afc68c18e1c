// The Tokens page's types and words: a token as listed, the scopes in words, the expiry choices.
import type { components, paths } from '../../api/schema';

/** A token as listed; `created_by_user_id` is the member who made it in the dashboard (null: opsctl or another token). */
export type TokenInfo = components['schemas']['TokenInfo'];
export type Created = TokenInfo & { token: string };
export type ScopeName = paths['/v1/tokens']['post']['requestBody']['content']['application/json']['scopes'][number];

/** SPEC.md §5's scope table, in words for the checkboxes. */
export const scopeHelp: Record<string, string> = {
  'media:read': 'list and retrieve files',
  'media:write': 'upload and delete files',
  'logs:read': 'queries, live tail, datasets',
  'logs:write': 'ingest events, manage datasets',
  'cases:read': 'read cases',
  'cases:write': 'create and update cases',
  'apps:read': 'read apps',
  'apps:write': 'submit apps',
  'usage:read': 'read quota usage',
  'members:read': 'list organisation members',
  'members:write': 'invite, change and remove members',
  'billing:read': 'read billing and plan',
  'tokens:write': 'create, list and revoke tokens',
  'monitors:read': 'read monitors, channels and deliveries',
  'monitors:write': 'create, change and test monitors and channels',
  'audit:read': "read the organisation's audit log",
};

export const day = 86_400_000;
export const expiryChoices = [
  { value: 'never', label: 'Never' },
  { value: '7', label: 'In 7 days' },
  { value: '30', label: 'In 30 days' },
  { value: '90', label: 'In 90 days' },
  { value: '365', label: 'In a year' },
  { value: 'date', label: 'On a date…' },
] as const;
