// Media (issue #18): the project's files as a grid of thumbnails (images from their delivery
// URL; icons for video, PDF and others), uploads by drag and drop or a file picker with a
// progress bar each, copy URL, folder and tag filters (GET /v1/media's `folder` and `tag`),
// "load more" by cursor, soft delete with confirmation, and the recently deleted files with
// restore within their 30-day window (GET /v1/media?deleted=true, POST /v1/media/{id}/restore).
import type { JSX } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { api, data } from '../../api/client';
import { ConfirmButton } from '../../components/confirm';
import { CopyButton } from '../../components/copy-button';
import { ErrorNote, Loading } from '../../components/notes';
import { Link, navigate, type Route } from '../../router';
import { useSession } from '../../session';
import { explainUploadError, formatBytes, supportedTypes, uploadFile, type ListedFile, type MediaFile, type UploadHandle } from './media-upload';
import './media.css';

const pageSize = 24;
/** Uploads sent at the same time; the others wait their turn. */
const parallelUploads = 3;

interface Filter {
  view: 'active' | 'deleted';
  folder: string;
  tag: string;
}

function filterOf(route: Route): Filter {
  return {
    view: route.query.get('view') === 'deleted' ? 'deleted' : 'active',
    folder: route.query.get('folder') ?? '',
    tag: route.query.get('tag') ?? '',
  };
}

function hrefOf(filter: Partial<Filter>): string {
  const q = new URLSearchParams();
  if (filter.view === 'deleted') q.set('view', 'deleted');
  if (filter.folder) q.set('folder', filter.folder);
  if (filter.tag) q.set('tag', filter.tag);
  const s = q.toString();
  return s ? `/media?${s}` : '/media';
}

function matches(file: MediaFile, filter: Filter): boolean {
  return filter.view === 'active' && (!filter.folder || file.folder === filter.folder) && (!filter.tag || file.tags.includes(filter.tag));
}

interface Listing {
  files: ListedFile[];
  cursor: string;
  hasMore: boolean;
  loading: boolean;
  error?: unknown;
}

export function MediaPage(props: { route: Route }): JSX.Element {
  const session = useSession();
  const filter = filterOf(props.route);
  const key = `${session.target.org_id}/${session.target.project_id}/${session.target.mode}|${hrefOf(filter)}`;
  const canWrite = session.can('media:write');
  const [listing, setListing] = useState<Listing>({ files: [], cursor: '', hasMore: false, loading: true });
  const [notice, setNotice] = useState<JSX.Element | string>();
  /** Folders and tags seen in this visit, offered as suggestions in the filters and the upload form. */
  const [seen, setSeen] = useState<{ folders: Set<string>; tags: Set<string> }>({ folders: new Set(), tags: new Set() });
  const loadKey = useRef(key);

  const remember = useCallback((files: MediaFile[]) => {
    setSeen((s) => {
      const folders = new Set(s.folders);
      const tags = new Set(s.tags);
      for (const f of files) {
        if (f.folder) folders.add(f.folder);
        for (const t of f.tags) tags.add(t);
      }
      return folders.size === s.folders.size && tags.size === s.tags.size ? s : { folders, tags };
    });
  }, []);

  const load = useCallback(
    async (cursor: string) => {
      const forKey = key;
      setListing((l) => ({ ...(cursor ? l : { files: [], cursor: '', hasMore: false }), loading: true, error: undefined }));
      try {
        const query = {
          limit: pageSize,
          ...(cursor ? { cursor } : {}),
          ...(filter.folder ? { folder: filter.folder } : {}),
          ...(filter.tag ? { tag: filter.tag } : {}),
          ...(filter.view === 'deleted' ? { deleted: true } : {}),
        };
        const page = await data(api.GET('/v1/media', { params: { query } }));
        if (loadKey.current !== forKey) return;
        remember(page.files);
        setListing((l) => {
          const known = new Set(cursor ? l.files.map((f) => f.id) : []);
          const files = cursor ? [...l.files, ...page.files.filter((f) => !known.has(f.id))] : page.files;
          return { files, cursor: page.next_cursor, hasMore: page.has_more, loading: false };
        });
      } catch (error) {
        if (loadKey.current === forKey) setListing((l) => ({ ...l, loading: false, error }));
      }
    },
    [key],
  );

  useEffect(() => {
    loadKey.current = key;
    setNotice(undefined);
    void load('');
  }, [key]);

  // A file dropped beside the drop zone must not make the browser leave the page to show it.
  useEffect(() => {
    const keep = (e: DragEvent) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    };
    addEventListener('dragover', keep);
    addEventListener('drop', keep);
    return () => {
      removeEventListener('dragover', keep);
      removeEventListener('drop', keep);
    };
  }, []);

  // After the shell's own title effect, which runs after this page's on the first render.
  useEffect(() => {
    queueMicrotask(() => {
      document.title = `${filter.view === 'deleted' ? 'Recently deleted · Media' : 'Media'} · opsplatform`;
    });
  }, [filter.view]);

  const uploaded = (file: MediaFile) => {
    remember([file]);
    if (matches(file, filter)) setListing((l) => (l.files.some((f) => f.id === file.id) ? l : { ...l, files: [file, ...l.files] }));
  };

  const remove = async (file: ListedFile) => {
    const result = await data(api.DELETE('/v1/media/{id}', { params: { path: { id: file.id } } }));
    setListing((l) => ({ ...l, files: l.files.filter((f) => f.id !== file.id) }));
    setNotice(
      <>
        Deleted “{file.original_name}”. Its URL keeps working until {formatWhen(result.purges_at)}; you can restore it from{' '}
        <Link href={hrefOf({ view: 'deleted' })}>Recently deleted</Link> until then.
      </>,
    );
  };

  const restore = async (file: ListedFile) => {
    const restored = await data(api.POST('/v1/media/{id}/restore', { params: { path: { id: file.id } } }));
    setListing((l) => ({ ...l, files: l.files.filter((f) => f.id !== file.id) }));
    setNotice(
      <>
        Restored “{restored.original_name}”: it is back among the <Link href={hrefOf({ folder: filter.folder, tag: filter.tag })}>files</Link>.
      </>,
    );
  };

  const filtered = Boolean(filter.folder || filter.tag);
  return (
    <section class="media-page" aria-labelledby="media-title">
      <h1 id="media-title">Media</h1>
      <nav class="media-tabs" aria-label="Media views">
        <Link href={hrefOf({ folder: filter.folder, tag: filter.tag })} aria-current={filter.view === 'active' ? 'page' : undefined}>
          Files
        </Link>
        <Link href={hrefOf({ view: 'deleted', folder: filter.folder, tag: filter.tag })} aria-current={filter.view === 'deleted' ? 'page' : undefined}>
          Recently deleted
        </Link>
      </nav>

      {filter.view === 'active' && canWrite && <Uploader defaultFolder={filter.folder} folders={seen.folders} tags={seen.tags} onUploaded={uploaded} />}
      {filter.view === 'deleted' && (
        <p class="muted">
          Deleted files stay here for 30 days, and their URLs keep working meanwhile{canWrite ? '; restore one to bring it back' : ''}. After that they are removed for
          good.
        </p>
      )}

      <Filters key={hrefOf(filter)} filter={filter} folders={seen.folders} tags={seen.tags} />

      {notice && (
        <p class="note ok" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={listing.error} prefix="The files could not be loaded" />
      <p class="small muted" aria-live="polite">
        {listing.loading && listing.files.length === 0
          ? ''
          : `${listing.files.length}${listing.hasMore ? '+' : ''} ${filter.view === 'deleted' ? 'deleted ' : ''}file${listing.files.length === 1 ? '' : 's'}${filtered ? describeFilter(filter) : ''}`}
      </p>
      {!listing.loading && !listing.error && listing.files.length === 0 && (
        <p class="media-empty muted">
          {filter.view === 'deleted' ? 'No recently deleted files' : 'No files yet'}
          {filtered ? describeFilter(filter) : ''}.{filter.view === 'active' && canWrite && !filtered ? ' Drop files above or choose them to upload.' : ''}
        </p>
      )}
      <ul class="media-grid" aria-label={filter.view === 'deleted' ? 'Recently deleted files' : 'Files'}>
        {listing.files.map((file) => (
          <FileCard key={file.id} file={file} canWrite={canWrite} onDelete={remove} onRestore={restore} filter={filter} />
        ))}
      </ul>
      {listing.loading && <Loading what="files" />}
      {listing.hasMore && !listing.loading && (
        <div class="row">
          <button type="button" onClick={() => void load(listing.cursor)}>
            Load more
          </button>
        </div>
      )}
    </section>
  );
}

function describeFilter(filter: Filter): string {
  const parts = [filter.folder && `in folder “${filter.folder}”`, filter.tag && `tagged “${filter.tag}”`].filter(Boolean);
  return parts.length ? ` ${parts.join(' and ')}` : '';
}

function formatWhen(iso: string | undefined): string {
  if (!iso) return '–';
  return new Date(iso).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** Folder and tag filters: GET /v1/media filters on the server (`folder`, `tag`); kept in the page's address. */
function Filters(props: { filter: Filter; folders: Set<string>; tags: Set<string> }): JSX.Element {
  const [folder, setFolder] = useState(props.filter.folder);
  const [tag, setTag] = useState(props.filter.tag);
  const submit = (e: Event) => {
    e.preventDefault();
    navigate(hrefOf({ view: props.filter.view, folder: folder.trim(), tag: tag.trim() }));
  };
  return (
    <form class="media-filters" role="search" aria-label="Filter files" onSubmit={submit}>
      <label>
        Folder
        <input type="text" name="folder" value={folder} list="media-folders" placeholder="any folder" maxLength={256} onInput={(e) => setFolder(e.currentTarget.value)} />
      </label>
      <label>
        Tag
        <input type="text" name="tag" value={tag} list="media-tags" placeholder="any tag" maxLength={64} onInput={(e) => setTag(e.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
      {(props.filter.folder || props.filter.tag) && (
        <Link href={hrefOf({ view: props.filter.view })} class="media-clear">
          Clear filters
        </Link>
      )}
      <datalist id="media-folders">
        {[...props.folders].sort().map((f) => (
          <option key={f} value={f} />
        ))}
      </datalist>
      <datalist id="media-tags">
        {[...props.tags].sort().map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
    </form>
  );
}

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

function FileCard(props: { file: ListedFile; canWrite: boolean; filter: Filter; onDelete(file: ListedFile): Promise<void>; onRestore(file: ListedFile): Promise<void> }): JSX.Element {
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

interface Upload {
  id: number;
  file: File;
  folder: string;
  tags: string[];
  state: 'queued' | 'uploading' | 'done' | 'failed';
  loaded: number;
  total: number;
  error?: string;
  handle?: UploadHandle;
}

let uploadIds = 0;

/**
 * The drop zone, the file picker (a real button, usable with the keyboard) and one progress bar
 * per file. At most `parallelUploads` are sent at once; each ends on its own, with its own error.
 */
function Uploader(props: { defaultFolder: string; folders: Set<string>; tags: Set<string>; onUploaded(file: MediaFile): void }): JSX.Element {
  const { can } = useSession();
  const picker = useRef<HTMLInputElement>(null);
  const [folder, setFolder] = useState(props.defaultFolder);
  const [tags, setTags] = useState('');
  const [over, setOver] = useState(false);
  const [uploads, setUploads] = useState<Upload[]>([]);
  const plan = useRef<string | undefined>(undefined);
  const onUploaded = useRef(props.onUploaded);
  onUploaded.current = props.onUploaded;

  useEffect(() => setFolder(props.defaultFolder), [props.defaultFolder]);

  const update = (id: number, change: Partial<Upload>) => setUploads((list) => list.map((u) => (u.id === id ? { ...u, ...change } : u)));

  /** The plan's name, for quota and size errors (GET /v1/usage needs usage:read; without it the words leave it out). */
  const planName = async (): Promise<string | undefined> => {
    if (plan.current || !can('usage:read')) return plan.current;
    try {
      plan.current = (await data(api.GET('/v1/usage', {}))).plan;
    } catch {
      // the explanation goes without the plan's name
    }
    return plan.current;
  };

  const start = (upload: Upload) => {
    const handle = uploadFile(upload.file, { folder: upload.folder, tags: upload.tags }, (loaded, total) => update(upload.id, { loaded, total }));
    update(upload.id, { state: 'uploading', handle });
    handle.promise.then(
      (file) => {
        update(upload.id, { state: 'done', loaded: upload.file.size, total: upload.file.size, handle: undefined });
        onUploaded.current(file);
      },
      async (error: unknown) => {
        const needsPlan = error instanceof Error && 'code' in error && ['quota_exceeded', 'file_too_large', 'too_large'].includes(String(error.code));
        const words = explainUploadError(error, upload.file, needsPlan ? await planName() : undefined);
        update(upload.id, { state: 'failed', error: words, handle: undefined });
      },
    );
  };

  // Starts queued uploads while fewer than `parallelUploads` are under way.
  useEffect(() => {
    let running = uploads.filter((u) => u.state === 'uploading').length;
    for (const u of uploads) {
      if (running >= parallelUploads) break;
      if (u.state === 'queued') {
        running++;
        start(u);
      }
    }
  }, [uploads]);

  const add = (files: FileList | File[] | null | undefined) => {
    const list = [...(files ?? [])];
    if (list.length === 0) return;
    const tagList = [
      ...new Set(
        tags
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      ),
    ];
    setUploads((current) => [
      ...current,
      ...list.map((file): Upload => ({ id: ++uploadIds, file, folder: folder.trim(), tags: tagList, state: 'queued', loaded: 0, total: file.size })),
    ]);
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    add(e.dataTransfer?.files);
  };
  const onDragOver = (e: DragEvent) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    setOver(true);
  };

  const finished = uploads.filter((u) => u.state === 'done' || u.state === 'failed');
  return (
    <section class="media-upload" aria-labelledby="upload-title">
      <h2 id="upload-title" class="sr-only">
        Upload files
      </h2>
      <div
        class={`media-drop${over ? ' over' : ''}`}
        data-testid="media-drop"
        onDragEnter={onDragOver}
        onDragOver={onDragOver}
        onDragLeave={(e) => {
          if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node | null)) setOver(false);
        }}
        onDrop={onDrop}
      >
        <p>
          <strong>Drop files here</strong> or{' '}
          <button type="button" class="primary" onClick={() => picker.current?.click()}>
            Choose files…
          </button>
        </p>
        <p class="small muted">PNG, JPEG, GIF, WebP, MP4, WebM or PDF; several at once.</p>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          accept={supportedTypes.join(',')}
          data-testid="media-picker"
          onChange={(e) => {
            add(e.currentTarget.files);
            e.currentTarget.value = '';
          }}
        />
        <div class="media-upload-fields">
          <label>
            Into folder
            <input type="text" value={folder} list="media-folders" placeholder="(none)" maxLength={256} onInput={(e) => setFolder(e.currentTarget.value)} />
          </label>
          <label>
            Tags (comma-separated)
            <input type="text" value={tags} list="media-tags" placeholder="e.g. logo, banner" onInput={(e) => setTags(e.currentTarget.value)} />
          </label>
        </div>
      </div>
      {uploads.length > 0 && (
        <ul class="media-uploads" aria-label="Uploads">
          {uploads.map((u) => {
            const percent = u.state === 'done' ? 100 : u.total > 0 ? Math.min(100, Math.round((u.loaded / u.total) * 100)) : 0;
            return (
              <li key={u.id} class={`media-upload-item ${u.state}`} data-testid="upload">
                <div class="row">
                  <span class="media-upload-name" title={u.file.name}>
                    {u.file.name}
                  </span>
                  <span class="small muted">{formatBytes(u.file.size)}</span>
                  <span class="small media-upload-state" aria-live="polite">
                    {u.state === 'queued' ? 'Waiting' : u.state === 'uploading' ? `${percent}%` : u.state === 'done' ? 'Uploaded' : 'Failed'}
                  </span>
                  {u.state === 'uploading' || u.state === 'queued' ? (
                    <button type="button" aria-label={`Cancel the upload of ${u.file.name}`} onClick={() => (u.handle ? u.handle.abort() : update(u.id, { state: 'failed', error: 'Cancelled.' }))}>
                      Cancel
                    </button>
                  ) : null}
                </div>
                <progress max={100} value={percent} aria-label={`Upload of ${u.file.name}`} />
                {u.error && (
                  <p class="note error" role="alert">
                    {u.file.name}: {u.error}
                  </p>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {finished.length > 0 && (
        <div class="row">
          <button type="button" onClick={() => setUploads((list) => list.filter((u) => u.state === 'queued' || u.state === 'uploading'))}>
            Clear finished uploads
          </button>
        </div>
      )}
    </section>
  );
}
