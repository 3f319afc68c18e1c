import { Type } from '@sinclair/typebox';

/** Error body of every failure (SPEC.md §7, DECISIONS.md §5); extra fields vary by code. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.String(),
        message: Type.String(),
        request_id: Type.String(),
      },
      { additionalProperties: true },
    ),
  },
  { $id: 'ErrorBody', description: 'error' },
);

export const DateTime = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });

export const Ok = Type.Object({ ok: Type.Literal(true) });
