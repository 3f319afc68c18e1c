// The Alerts page's channels: each with its last deliveries and "Send test"; the create form.
import type { JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ErrorNote, Loading } from '../../components/notes';
import { When } from '../../components/copy-field';
import { useChannels } from './hooks/use-channels';
import { useChannelDeliveries } from './hooks/use-channel-deliveries';
import { CreateChannel } from './channel-form';
import { DeliveryLine } from './delivery-line';
import { testChannel } from './mutations';
import type { Channel } from './model';

export function ChannelsSection(props: { write: boolean }): JSX.Element {
  const channels = useChannels();
  return (
    <section aria-labelledby="channels-title">
      <h2 id="channels-title">Channels</h2>
      <p class="muted small">
        Where monitors send their notifications: a webhook (signed JSON), Discord or Slack. Discord and Slack URLs are secrets and shown masked.
      </p>
      {props.write && <CreateChannel onCreated={(c) => channels.update((all) => [c, ...all.filter((x) => x.id !== c.id)])} />}
      <ErrorNote error={channels.error} />
      {channels.items === undefined ? (
        !channels.error && <Loading what="channels" />
      ) : channels.items.length === 0 ? (
        <p class="muted" data-testid="no-channels">
          No channels yet.
        </p>
      ) : (
        <ul class="channels">
          {channels.items.map((c) => (
            <ChannelCard key={c.id} channel={c} write={props.write} />
          ))}
        </ul>
      )}
      {channels.hasMore && (
        <button type="button" disabled={channels.loading} onClick={channels.loadMore}>
          Load more channels
        </button>
      )}
    </section>
  );
}

function ChannelCard(props: { channel: Channel; write: boolean }): JSX.Element {
  const c = props.channel;
  const deliveries = useChannelDeliveries(c.id, 5);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const [notice, setNotice] = useState('');
  const pending = deliveries.items?.some((d) => d.state === 'pending') ?? false;
  // While a delivery is pending (a test just sent, a retry due), look again every 1.5 s.
  useEffect(() => {
    if (!pending) return;
    const timer = setTimeout(deliveries.reload, 1500);
    return () => clearTimeout(timer);
  }, [deliveries.items]);

  const sendTest = async () => {
    setBusy(true);
    setError(undefined);
    setNotice('');
    try {
      const sent = await testChannel(c.id);
      setNotice(`Test notification ${sent.delivery_id} stored; it is sent within a second.`);
      deliveries.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <li class="panel channel" data-channel-id={c.id} aria-label={`Channel ${c.name}`}>
      <div class="channel-head">
        <div>
          <strong>{c.name}</strong> <span class="chip">{c.kind}</span>
          <div class="mono small url">{c.url}</div>
          <div class="small muted">
            {c.enabled ? 'enabled' : <span class="note error">disabled: {c.disabled_reason ?? 'no reason given'}</span>}
            {c.consecutive_failures > 0 && ` · ${c.consecutive_failures} failed attempt${c.consecutive_failures === 1 ? '' : 's'} in a row`} · created <When iso={c.created_at} />
          </div>
        </div>
        {props.write && (
          <button type="button" disabled={busy || !c.enabled} onClick={() => void sendTest()}>
            Send test
          </button>
        )}
      </div>
      <p class="note ok small" role="status">
        {notice}
      </p>
      <ErrorNote error={error} />
      <h3 class="small">Last deliveries</h3>
      <ErrorNote error={deliveries.error} />
      {deliveries.items === undefined ? (
        !deliveries.error && <Loading what="deliveries" />
      ) : deliveries.items.length === 0 ? (
        <p class="muted small">Nothing sent yet.</p>
      ) : (
        <ul class="deliveries" aria-label={`Last deliveries of ${c.name}`}>
          {deliveries.items.slice(0, 5).map((d) => (
            <DeliveryLine key={d.id} delivery={d} />
          ))}
        </ul>
      )}
    </li>
  );
}
