// Folder and tag filters of the Media page, with the folders and tags seen as suggestions.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { Link, navigate } from '../../router';
import { hrefOf, type Filter } from './media-filter';

/** Folder and tag filters: GET /v1/media filters on the server (`folder`, `tag`); kept in the page's address. */
export function Filters(props: { filter: Filter; folders: Set<string>; tags: Set<string> }): JSX.Element {
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
