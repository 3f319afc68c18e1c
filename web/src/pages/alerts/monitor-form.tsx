// The monitor form: /alerts/new (optionally ?q=<SOQL>, as the explorer's "Create monitor from
// this query" opens it) and /alerts/{id}/edit. The query is written in the explorer's SOQL
// editor; a threshold monitor is previewed beside the form (POST /v1/monitors/preview).
import type { JSX } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { ApiError } from '../../api/errors';
import { ErrorNote, Loading } from '../../components/notes';
import { Link, navigate } from '../../router';
import { useSession } from '../../session';
import { SoqlEditor } from '../explorer/editor';
import { useChannels } from './hooks/use-channels';
import { useMonitor } from './hooks/use-monitor';
import { usePreview } from './hooks/use-preview';
import { bodyOf, previewOf, valuesFor, type FormValues } from './form-state';
import { ChannelPicker, KindFields } from './monitor-fields';
import { FieldError, invalid, OtherError } from './field-error';
import { PreviewChart } from './preview-chart';
import { createMonitor, updateMonitor } from './mutations';
import { fieldOf, kindOf, type Monitor } from './model';

const formFields = ['name', 'kind', 'q', 'window', 'every', 'condition', 'for', 'no_data', 'repeat', 'group_window', 'channel_ids'];

/** /alerts/{id}/edit: the form once the monitor is loaded. */
export function EditMonitorPage(props: { id: string }): JSX.Element {
  const { monitor, error } = useMonitor(props.id);
  if (error) return <ErrorNote error={error} />;
  if (!monitor) return <Loading what="the monitor" />;
  return <MonitorForm monitor={monitor} initialQ={monitor.q} />;
}

export function MonitorForm(props: { monitor?: Monitor; initialQ: string }): JSX.Element {
  const { monitor } = props;
  const session = useSession();
  const channels = useChannels();
  const [values, setValues] = useState<FormValues>(() => valuesFor(monitor, props.initialQ));
  // The kind follows the query (stats → threshold) until the reader chooses one.
  const [kindChosen, setKindChosen] = useState(monitor !== undefined);
  const [external] = useState(() => ({ text: props.initialQ }));
  const [error, setError] = useState<unknown>();
  const [sentQ, setSentQ] = useState('');
  const [busy, setBusy] = useState(false);
  // Changing the field a refusal named takes its message away (the next save asks again).
  const forget = (key: keyof FormValues) => {
    const field = key === 'op' || key === 'value' ? 'condition' : key;
    if (error !== undefined && fieldOf(error) === field) setError(undefined);
  };
  const set = <K extends keyof FormValues>(key: K, value: FormValues[K]) => {
    forget(key);
    setValues((v) => ({ ...v, [key]: value }));
  };
  const setQ = (q: string) => setValues((v) => ({ ...v, q, kind: kindChosen ? v.kind : kindOf(q) }));

  const previewInput = useMemo(() => previewOf(values), [values]);
  const preview = usePreview(previewInput);

  if (!session.can('monitors:write')) {
    return (
      <section class="alerts-page">
        <h1>{monitor ? `Edit ${monitor.name}` : 'New monitor'}</h1>
        <p class="note" data-testid="monitor-form-read-only">
          Your role ({session.membership.role}) cannot create or change monitors: Owners, Admins and Developers can. <Link href="/alerts">Back to Alerts</Link>
        </p>
      </section>
    );
  }

  const submit = async (event?: Event) => {
    event?.preventDefault();
    setBusy(true);
    setError(undefined);
    const body = bodyOf(values);
    setSentQ(body.q);
    try {
      const saved = monitor ? await updateMonitor(monitor.id, body) : await createMonitor(body);
      navigate(`/alerts/${saved.id}`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  // A SOQL refusal (of the save, else of the preview) underlined where the API says, while the editor holds that text.
  const soql = [error, preview.error].find((e): e is ApiError => e instanceof ApiError && e.code.startsWith('soql_'));
  const position = soql && typeof soql.details.position === 'number' ? soql.details.position : null;
  const soqlText = soql === error ? sentQ : (preview.input?.q ?? '');
  const editorError = soql && position !== null ? { position, message: soql.message, text: soqlText } : null;
  const nearText = position !== null ? soqlText.slice(position, position + 20).trimEnd() : '';

  return (
    <section class="alerts-page monitor-form">
      <p class="small">
        <Link href={monitor ? `/alerts/${monitor.id}` : '/alerts'}>← {monitor ? monitor.name : 'Alerts'}</Link>
      </p>
      <h1>{monitor ? `Edit ${monitor.name}` : 'New monitor'}</h1>
      <div class="form-layout">
        <form class="panel" onSubmit={submit} aria-label={monitor ? 'Edit monitor' : 'New monitor'} noValidate>
          <div class="form-grid">
            <div class="field">
              <label>
                Name
                <input name="name" maxLength={100} value={values.name} placeholder="e.g. Kicks on eu-1" onInput={(e) => set('name', e.currentTarget.value)} {...invalid(error, 'name')} />
              </label>
              <FieldError error={error} name="name" />
            </div>
            <div class="field">
              <label>
                Kind
              <select
                name="kind"
                value={values.kind}
                disabled={monitor !== undefined}
                onChange={(e) => {
                  setKindChosen(true);
                  set('kind', e.currentTarget.value as FormValues['kind']);
                }}
              >
                <option value="threshold">threshold: a number per group</option>
                <option value="match">match: each matching event</option>
              </select>
              </label>
              <FieldError error={error} name="kind" />
            </div>
          </div>
          <div class="field">
            <span id="q-label">Query (SOQL)</span>
            <span class="muted small">
              {values.kind === 'threshold'
                ? ' A stats query with one aggregate, grouped by fields only: severity >= error stats count() by source'
                : ' A filter, as live tail takes it: event:player.kick AND source:eu*'}
            </span>
            <SoqlEditor external={external} onChange={setQ} onRun={() => void submit()} error={editorError} label="Monitor query" />
            {soql && (
              <p class="note error small" role="alert" data-testid="q-error">
                {position === null
                  ? 'The query cannot be used'
                  : `The query cannot be used at character ${position + 1}${nearText ? ` near “${nearText}”` : ' (the end)'}`}
                : {soql.message}
              </p>
            )}
            {!soql && <FieldError error={error} name="q" />}
          </div>
          <KindFields values={values} set={set} error={error} />
          <ChannelPicker values={values} set={set} error={error} channels={channels.items} />
          <OtherError error={error} fields={formFields} />
          <div class="row">
            <button type="submit" class="primary" disabled={busy}>
              {monitor ? 'Save monitor' : 'Create monitor'}
            </button>
            <Link href={monitor ? `/alerts/${monitor.id}` : '/alerts'}>Cancel</Link>
          </div>
        </form>
        {values.kind === 'threshold' ? (
          <PreviewChart
            preview={preview.preview}
            condition={preview.input?.condition}
            loading={preview.loading}
            error={preview.error}
            waiting="Write a stats query and a threshold to see when it would have fired."
          />
        ) : (
          <section class="preview" aria-label="Preview">
            <h2>Preview</h2>
            <p class="muted small">A match monitor notifies each matching event as it is ingested; open the query in the explorer to see what it matches.</p>
            {values.q.trim() && (
              <p class="small">
                <Link href={`/?q=${encodeURIComponent(values.q)}&range=24h`}>Open in the explorer</Link>
              </p>
            )}
          </section>
        )}
      </div>
    </section>
  );
}
