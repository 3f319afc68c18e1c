import { Type } from '@sinclair/typebox';
import { DateTime } from '../http/schemas.js';

/** SPEC.md §2.1, both upload shapes merged (DECISIONS.md §7). */
export const FileSchema = Type.Object(
  {
    id: Type.String({ description: 'f_ + ULID' }),
    url: Type.String({ description: 'permanent public delivery URL under {cdn_url}' }),
    key: Type.String({ description: 'storage key' }),
    size: Type.Integer({ description: 'bytes' }),
    content_type: Type.String(),
    sha256: Type.String({ description: 'hex SHA-256 of the bytes' }),
    original_name: Type.String(),
    filename: Type.String({ description: 'same as original_name' }),
    org_id: Type.String(),
    tags: Type.Array(Type.String()),
    folder: Type.String(),
    abuse_status: Type.String({ enum: ['pending', 'clean', 'flagged', 'blocked'] }),
    visibility: Type.String({ enum: ['public'] }),
    storage_class: Type.String({ enum: ['standard'] }),
    created_at: DateTime(),
    updated_at: DateTime(),
  },
  { $id: 'File' },
);

export const FileId = Type.Object({ id: Type.String({ maxLength: 64, description: 'file id (f_ + ULID)' }) });

/**
 * An item of GET /media: a File; in the list of soft-deleted files (`deleted=true`) also
 * `deleted`, `deleted_at` and `purges_at`, which active files never carry.
 */
export const ListedFileSchema = Type.Composite(
  [
    FileSchema,
    Type.Object({
      deleted: Type.Optional(Type.Literal(true, { description: 'only in the list of soft-deleted files (deleted=true)' })),
      deleted_at: Type.Optional(DateTime('when the file was soft-deleted; only with deleted=true')),
      purges_at: Type.Optional(DateTime('when it is removed for good, unless restored first; only with deleted=true')),
    }),
  ],
  { $id: 'ListedFile' },
);
