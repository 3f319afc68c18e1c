// Create a channel (POST /v1/channels); a webhook channel's signing secret is shown once.
import type { JSX } from 'preact';
import { useState } from 'preact/hooks';
import { CopyField } from '../../components/copy-field';
import { createChannel } from './mutations';
import { FieldError, invalid, OtherError } from './field-error';
import { fieldOf, type Channel, type ChannelKind } from './model';

const kinds: Array<{ value: ChannelKind; label: string; hint: string }> = [
  { value: 'webhook', label: 'Webhook', hint: 'https://… (signed JSON; a signing secret is shown once)' },
  { value: 'discord', label: 'Discord', hint: 'https://discord.com/api/webhooks/…' },
  { value: 'slack', label: 'Slack', hint: 'https://hooks.slack.com/services/…' },
];

export function CreateChannel(props: { onCreated: (channel: Channel) => void }): JSX.Element {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ChannelKind>('webhook');
  const [url, setUrl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [secret, setSecret] = useState<{ name: string; value: string }>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const created = await createChannel({ name: name.trim(), kind, url: url.trim() });
      if (created.signing_secret) setSecret({ name: created.name, value: created.signing_secret });
      setName('');
      setUrl('');
      props.onCreated(created);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      {secret && (
        <div class="panel secret" role="region" aria-label="Signing secret" data-testid="channel-secret">
          <p class="note">
            <strong>Channel “{secret.name}” created. Copy its signing secret now: you will not see it again.</strong> The receiver checks <code>X-Ops-Signature</code> with it.
          </p>
          <CopyField label="Signing secret" value={secret.value} testId="signing-secret" />
          <div class="row end">
            <button type="button" onClick={() => setSecret(undefined)}>
              I have copied it
            </button>
          </div>
        </div>
      )}
      <details class="panel create-channel">
        <summary>Add a channel</summary>
        <form onSubmit={submit} aria-label="Add a channel">
          <div class="form-grid">
            <div class="field">
              <label>
                Channel name
                <input name="channel-name" required maxLength={100} value={name} onInput={(e) => {
                    if (fieldOf(error) === 'name') setError(undefined);
                    setName(e.currentTarget.value);
                  }} {...invalid(error, 'name')} />
              </label>
              <FieldError error={error} name="name" />
            </div>
            <label>
              Kind
              <select name="channel-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value as ChannelKind)}>
                {kinds.map((k) => (
                  <option key={k.value} value={k.value}>
                    {k.label}
                  </option>
                ))}
              </select>
            </label>
            <div class="field wide-field">
              <label>
              URL
              <input
                name="channel-url"
                type="url"
                required
                maxLength={2048}
                value={url}
                placeholder={kinds.find((k) => k.value === kind)?.hint}
                onInput={(e) => {
                    if (fieldOf(error) === 'url') setError(undefined);
                    setUrl(e.currentTarget.value);
                  }}
                {...invalid(error, 'url')}
              />
              </label>
              <FieldError error={error} name="url" />
            </div>
          </div>
          <OtherError error={error} fields={['name', 'url']} />
          <button type="submit" class="primary" disabled={busy}>
            Add channel
          </button>
        </form>
      </details>
    </>
  );
}
