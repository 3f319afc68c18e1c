// Saved searches in the explorer (DECISIONS.md §19, docs/saved-searches.md): a menu listing the
// project and mode's searches (opening one fills the editor and runs it, so the URL has it),
// Save for the editor's query and range under a typed name, Delete; and "Create monitor from
// this query", which opens the monitor form at /alerts/new?q=<the editor's SOQL>. Roles without
// logs:write (Viewer) see no Save or Delete, without monitors:write no monitor link: the API
// refuses those writes anyway.
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ConfirmButton } from '../../components/confirm';
import { ErrorNote } from '../../components/notes';
import { Link } from '../../router';
import { useSession } from '../../session';
import { savedRangeLabel } from './saved-range';
import type { TimeRange } from './soql-text';
import { useDeleteSearch } from './use-delete-search';
import { useSaveSearch } from './use-save-search';
import { useSavedSearches, type SavedSearch } from './use-saved-searches';

/** The monitor form's address for a query: the contract with the Alerts pages. */
export function monitorHref(q: string): string {
  return `/alerts/new?q=${encodeURIComponent(q)}`;
}

export function SavedSearches(props: { target: string; q: string; range: TimeRange; onOpen: (search: SavedSearch) => void }): JSX.Element {
  const { can } = useSession();
  const mayWrite = can('logs:write');
  const list = useSavedSearches(props.target);
  const remove = useDeleteSearch();
  const [open, setOpen] = useState(false);
  const [saving, setSaving] = useState(false);
  const [notice, setNotice] = useState('');
  const items = list.items ?? [];
  const count = list.items === undefined ? '' : ` (${items.length}${list.hasMore ? '+' : ''})`;

  return (
    <div class="saved-searches">
      <div class="row saved-controls">
        <button type="button" aria-expanded={open} aria-controls="saved-search-list" data-testid="saved-searches" onClick={() => setOpen(!open)}>
          Saved searches{count}
        </button>
        {mayWrite && (
          <button type="button" aria-expanded={saving} data-testid="save-search" onClick={() => (setSaving(!saving), setNotice(''))}>
            Save…
          </button>
        )}
        {can('monitors:write') && (
          <Link href={monitorHref(props.q)} class="create-monitor" data-testid="create-monitor">
            Create monitor from this query
          </Link>
        )}
        <span class="small ok" role="status" data-testid="saved-notice">
          {notice}
        </span>
      </div>
      {saving && (
        <SaveForm
          q={props.q}
          range={props.range}
          onCancel={() => setSaving(false)}
          onSaved={(search) => {
            list.update((rows) => [search, ...rows.filter((s) => s.id !== search.id)]);
            setSaving(false);
            setNotice(`Saved “${search.name}”.`);
          }}
        />
      )}
      {open && (
        <div id="saved-search-list" class="panel saved-list" role="region" aria-label="Saved searches" data-testid="saved-search-list">
          <ErrorNote error={list.error} />
          {list.items === undefined && !list.error && <p class="muted small">Loading saved searches…</p>}
          {list.items !== undefined && items.length === 0 && (
            <p class="muted small">No saved searches in this project and mode yet.{mayWrite ? ' Save… keeps the query in the editor and its time range under a name.' : ''}</p>
          )}
          <ul>
            {items.map((search) => (
              <li key={search.id} data-testid="saved-search" data-name={search.name}>
                <button
                  type="button"
                  class="saved-open"
                  title={`Open: ${search.q || '(every event)'}`}
                  onClick={() => {
                    setOpen(false);
                    setNotice('');
                    props.onOpen(search);
                  }}
                >
                  {search.name}
                </button>
                <code class="saved-q small">{search.q || '(every event)'}</code>
                <span class="muted small">{savedRangeLabel(search.range)}</span>
                {mayWrite && (
                  <ConfirmButton
                    label="Delete"
                    title={`Delete the saved search “${search.name}”?`}
                    confirmLabel="Delete"
                    danger
                    testId="delete-search"
                    action={async () => {
                      await remove(search.id);
                      list.update((rows) => rows.filter((s) => s.id !== search.id));
                      setNotice(`Deleted “${search.name}”.`);
                    }}
                  >
                    <p>It is deleted for everyone in this project and mode. The events and monitors are not touched.</p>
                  </ConfirmButton>
                )}
              </li>
            ))}
          </ul>
          {list.hasMore && (
            <button type="button" disabled={list.loading} onClick={list.loadMore}>
              Load more
            </button>
          )}
        </div>
      )}
    </div>
  );
}

function SaveForm(props: { q: string; range: TimeRange; onSaved: (search: SavedSearch) => void; onCancel: () => void }): JSX.Element {
  const saving = useSaveSearch();
  const [name, setName] = useState('');
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const submit = async (event: Event) => {
    event.preventDefault();
    const search = await saving.save(name, props.q, props.range);
    if (search) props.onSaved(search);
  };
  return (
    <form class="panel save-search" onSubmit={(e) => void submit(e)} aria-label="Save this search">
      <label>
        Name
        <input ref={input} name="name" required maxLength={100} autoComplete="off" value={name} data-testid="save-search-name" onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <p class="muted small">
        Saves the query in the editor, <code>{props.q || '(every event)'}</code>, with the time range, for everyone in this project and mode.
      </p>
      <ErrorNote error={saving.error} />
      <div class="row">
        <button type="submit" class="primary" disabled={saving.busy || !name.trim()} data-testid="save-search-submit">
          Save search
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
