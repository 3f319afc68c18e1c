// One file of the Media grid: its thumbnail (or an icon), name, size and type, date, folder and
// tags as filter links, Copy URL, and Delete or Restore.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm';
import { CopyButton } from '../../components/copy-button';
import { ErrorNote } from '../../components/notes';
import { Link } from '../../router';
import { formatWhen, hrefOf, type Filter } from './media-filter';
import { formatBytes, type ListedFile } from './media-upload';

function kindOf(type: string): 'image' | 'video' | 'pdf' | 'other' {
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/')) return 'video';
  if (type === 'application/pdf') return 'pdf';
  return 'other';
}

function TypeIcon(props: { kind: 'video' | 'pdf' | 'other' | 'blocked'; type: string }): JSX.Element {
  const label = props.kind === 'video' ? 'Video' : props.kind === 'pdf' ? 'PDF' : props.kind === 'blocked' ? 'Blocked' : 'File';
  return (
    <span class={`media-icon ${props.kind}`}>
      <svg viewBox="0 0 48 48" width="48" height="48" aria-hidden="true" focusable="false">
        {props.kind === 'video' ? (
          <>
            <rect x="4" y="10" width="40" height="28" rx="4" fill="none" stroke="currentColor" stroke-width="3" />
            <path d="M20 17 L31 24 L20 31 Z" fill="currentColor" />
          </>
        ) : props.kind === 'blocked' ? (
          <>
            <circle cx="24" cy="24" r="17" fill="none" stroke="currentColor" stroke-width="3" />
            <path d="M12 12 L36 36" stroke="currentColor" stroke-width="3" />
          </>
        ) : (
          <>
            <path d="M12 4 H29 L38 13 V44 H12 Z" fill="none" stroke="currentColor" stroke-width="3" stroke-linejoin="round" />
            <path d="M29 4 V13 H38" fill="none" stroke="currentColor" stroke-width="3" stroke-linejoin="round" />
          </>
        )}
      </svg>
      <span class="media-icon-label">
        {label}
        <span class="sr-only"> ({props.type})</span>
      </span>
    </span>
  );
}

function FolderIcon(): JSX.Element {
  return (
    <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
      <path d="M1 3.5 H6 L7.5 5 H15 V13.5 H1 Z" fill="none" stroke="currentColor" stroke-width="1.5" stroke-linejoin="round" />
    </svg>
  );
}

export function FileCard(props: { file: ListedFile; canWrite: boolean; filter: Filter; onDelete(file: ListedFile): Promise<void>; onRestore(file: ListedFile): Promise<void> }): JSX.Element {
  const { file } = props;
  const kind = kindOf(file.content_type);
  const blocked = file.abuse_status === 'blocked';
  const [broken, setBroken] = useState(false);
  const [restoring, setRestoring] = useState(false);
  const [restoreError, setRestoreError] = useState<unknown>();
  const name = file.original_name || file.filename || file.id;
  const thumb =
    kind === 'image' && !blocked && !broken ? (
      <img src={file.url} alt={name} loading="lazy" decoding="async" onError={() => setBroken(true)} />
    ) : (
      <TypeIcon kind={blocked ? 'blocked' : kind === 'image' ? 'other' : kind} type={file.content_type} />
    );
  const restore = async () => {
    setRestoring(true);
    setRestoreError(undefined);
    try {
      await props.onRestore(file);
    } catch (error) {
      setRestoreError(error);
      setRestoring(false);
    }
  };
  return (
    <li class="media-card" data-file-id={file.id}>
      {blocked ? (
        <div class="media-thumb">{thumb}</div>
      ) : (
        <a class="media-thumb" href={file.url} target="_blank" rel="noopener noreferrer" title={`Open ${name}`}>
          {thumb}
          <span class="sr-only"> (opens {name} in a new tab)</span>
        </a>
      )}
      <div class="media-meta">
        <h2 class="media-name" title={name}>
          {name}
        </h2>
        <p class="small muted">
          {formatBytes(file.size)} · {file.content_type}
          <br />
          {file.deleted_at ? (
            <>
              Deleted {formatWhen(file.deleted_at)}
              <br />
              Removed for good {formatWhen(file.purges_at)}
            </>
          ) : (
            <>Uploaded {formatWhen(file.created_at)}</>
          )}
        </p>
        {(file.folder || file.tags.length > 0) && (
          <p class="media-labels small">
            {file.folder && (
              <Link href={hrefOf({ view: props.filter.view, folder: file.folder })} class="media-folder" title={`Show the files in folder ${file.folder}`}>
                <span class="sr-only">Folder </span>
                <FolderIcon />
                {file.folder}
              </Link>
            )}
            {file.tags.map((tag) => (
              <Link key={tag} href={hrefOf({ view: props.filter.view, tag })} class="media-tag" title={`Show the files tagged ${tag}`}>
                #{tag}
              </Link>
            ))}
          </p>
        )}
        {blocked && <p class="note error small">This file was blocked and is no longer delivered.</p>}
        <div class="media-actions">
          {!blocked && <CopyButton value={file.url} label="Copy URL" what={`of ${name}`} />}
          {props.canWrite && !file.deleted_at && (
            <ConfirmButton label="Delete" title={`Delete “${name}”?`} confirmLabel="Delete" danger action={() => props.onDelete(file)}>
              <p>
                It leaves the grid at once. Its URL keeps working for 30 days, during which you can restore it from Recently deleted; after that it is removed for good.
              </p>
            </ConfirmButton>
          )}
          {props.canWrite && file.deleted_at && (
            <button type="button" disabled={restoring} aria-label={`Restore ${name}`} onClick={() => void restore()}>
              {restoring ? 'Restoring…' : 'Restore'}
            </button>
          )}
        </div>
        <ErrorNote error={restoreError} prefix="Not restored" />
      </div>
    </li>
  );
}
