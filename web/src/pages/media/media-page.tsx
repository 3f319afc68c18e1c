// Media: the project's files as a grid of thumbnails (images from their delivery
// URL; icons for video, PDF and others), uploads by drag and drop or a file picker with a
// progress bar each, copy URL, folder and tag filters (GET /v1/media's `folder` and `tag`),
// "load more" by cursor, soft delete with confirmation, and the recently deleted files with
// restore within their 30-day window (GET /v1/media?deleted=true, POST /v1/media/{id}/restore).
// Requests: use-media.ts (the list), use-media-writes.ts (delete, restore, the plan's name);
// uploads: uploader.tsx with media-upload.ts.
import type { JSX } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../../components/notes';
import { Link, type Route } from '../../router';
import { useSession } from '../../session';
import { FileCard } from './file-card';
import { Filters } from './filters';
import { describeFilter, filterOf, formatWhen, hrefOf, matches } from './media-filter';
import type { ListedFile, MediaFile } from './media-upload';
import { Uploader } from './uploader';
import { useMedia } from './use-media';
import { useDeleteFile, useRestoreFile } from './use-media-writes';
import './media.css';

export function MediaPage(props: { route: Route }): JSX.Element {
  const session = useSession();
  const filter = filterOf(props.route);
  const key = `${session.target.org_id}/${session.target.project_id}/${session.target.mode}|${hrefOf(filter)}`;
  const canWrite = session.can('media:write');
  const deleteFile = useDeleteFile();
  const restoreFile = useRestoreFile();
  const [notice, setNotice] = useState<JSX.Element | string>();
  /** Folders and tags seen in this visit, offered as suggestions in the filters and the upload form. */
  const [seen, setSeen] = useState<{ folders: Set<string>; tags: Set<string> }>({ folders: new Set(), tags: new Set() });

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

  const list = useMedia(key, filter, remember);
  const files = list.items ?? [];

  useEffect(() => setNotice(undefined), [key]);

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
    if (matches(file, filter)) list.update((rows) => (rows.some((f) => f.id === file.id) ? rows : [file, ...rows]));
  };

  const remove = async (file: ListedFile) => {
    const result = await deleteFile(file.id);
    list.update((rows) => rows.filter((f) => f.id !== file.id));
    setNotice(
      <>
        Deleted “{file.original_name}”. Its URL keeps working until {formatWhen(result.purges_at)}; you can restore it from{' '}
        <Link href={hrefOf({ view: 'deleted' })}>Recently deleted</Link> until then.
      </>,
    );
  };

  const restore = async (file: ListedFile) => {
    const restored = await restoreFile(file.id);
    list.update((rows) => rows.filter((f) => f.id !== file.id));
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
      <ErrorNote error={list.error} prefix="The files could not be loaded" />
      <p class="small muted" aria-live="polite">
        {list.loading && files.length === 0
          ? ''
          : `${files.length}${list.hasMore ? '+' : ''} ${filter.view === 'deleted' ? 'deleted ' : ''}file${files.length === 1 ? '' : 's'}${filtered ? describeFilter(filter) : ''}`}
      </p>
      {!list.loading && !list.error && files.length === 0 && (
        <p class="media-empty muted">
          {filter.view === 'deleted' ? 'No recently deleted files' : 'No files yet'}
          {filtered ? describeFilter(filter) : ''}.{filter.view === 'active' && canWrite && !filtered ? ' Drop files above or choose them to upload.' : ''}
        </p>
      )}
      <ul class="media-grid" aria-label={filter.view === 'deleted' ? 'Recently deleted files' : 'Files'}>
        {files.map((file) => (
          <FileCard key={file.id} file={file} canWrite={canWrite} onDelete={remove} onRestore={restore} filter={filter} />
        ))}
      </ul>
      {list.loading && <Loading what="files" />}
      {list.hasMore && !list.loading && (
        <div class="row">
          <button type="button" onClick={list.loadMore}>
            Load more
          </button>
        </div>
      )}
    </section>
  );
}
