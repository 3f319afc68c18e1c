import { Type } from '@sinclair/typebox';
import { DateTime } from '../../http/schemas.js';
import { MAX_QUERY_LENGTH } from '../../soql/index.js';

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * One object rather than a union, so a bad field is reported by name (a union's errors name the
 * wrong branch); saved-search.ts checks that it is either `{last}` or `{from, to}`.
 */
const RangeInput = Type.Object(
  {
    last: Type.Optional(Type.String({ maxLength: 16, description: '<n><unit>, unit s m h d w, 15m…30d: the search covers [now - last, now]' })),
    from: Type.Optional(Type.String({ maxLength: 64, description: 'RFC 3339 date-time with a time zone; with `to`, instead of `last`' })),
    to: Type.Optional(Type.String({ maxLength: 64, description: 'RFC 3339 date-time, after `from`' })),
  },
  { additionalProperties: false, description: '`{last}` or `{from, to}`' },
);

const writable = {
  name: Type.String({ minLength: 1, maxLength: 100, description: 'unique within the project and mode (409 conflict)' }),
  q: Type.String({ maxLength: MAX_QUERY_LENGTH, description: 'a SOQL query; must parse (400 soql_parse_error with its position)' }),
  range: Type.Optional(Type.Union([RangeInput, Type.Null()], { description: 'the time range the explorer opens it with; null or absent: none' })),
};

export const CreateSavedSearchBody = Type.Object(writable, { additionalProperties: false });
export const PatchSavedSearchBody = Type.Partial(Type.Object(writable), { additionalProperties: false });

export const SavedSearchSchema = Type.Object(
  {
    id: Type.String({ description: 'ss_<ULID>' }),
    name: Type.String(),
    q: Type.String(),
    range: Type.Union([Type.Object({ last: Type.String() }), Type.Object({ from: DateTime(), to: DateTime() }), Type.Null()]),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'SavedSearch' },
);
