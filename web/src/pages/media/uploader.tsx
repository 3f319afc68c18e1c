// The Media page's uploads: the drop zone, the file picker and a progress bar per file, at most
// `parallelUploads` at once (media-upload.ts sends each).
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../../session';
import { explainUploadError, formatBytes, supportedTypes, uploadFile, type MediaFile, type UploadHandle } from './media-upload';
import { usePlanName } from './use-media-writes';

/** Uploads sent at the same time; the others wait their turn. */
const parallelUploads = 3;

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
export function Uploader(props: { defaultFolder: string; folders: Set<string>; tags: Set<string>; onUploaded(file: MediaFile): void }): JSX.Element {
  const { can } = useSession();
  const usagePlan = usePlanName();
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
      plan.current = await usagePlan();
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
