// A monitor's history (GET /v1/monitors/{id}/history): state changes and notifications, each
// notification with every delivery attempt, newest first, "Load more" by the cursor.
import type { JSX } from 'preact';
import { When } from '../../components/copy-field';
import { ErrorNote, Loading } from '../../components/notes';
import type { PagedList } from '../../api/use-paged-list';
import { DeliveryLine } from './delivery-line';
import { formatValue, groupText, type Channel, type HistoryItem } from './model';

export function HistoryList(props: { history: PagedList<HistoryItem>; channels: Channel[] | undefined }): JSX.Element {
  const { history } = props;
  const nameOf = (id: string) => props.channels?.find((c) => c.id === id)?.name ?? id;
  return (
    <section aria-labelledby="history-title">
      <div class="page-head">
        <h2 id="history-title">History</h2>
        <button type="button" disabled={history.loading} onClick={history.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={history.error} />
      {history.items === undefined ? (
        !history.error && <Loading what="the history" />
      ) : history.items.length === 0 ? (
        <p class="muted" data-testid="no-history">
          Nothing yet: no state change and no notification.
        </p>
      ) : (
        <ol class="history" data-testid="history">
          {history.items.map((item) =>
            item.type === 'state_change' ? (
              <li key={`s:${item.id}`} class="history-item" data-type="state_change">
                <span class={`state state-${item.to}`}>{item.to}</span> {groupText(item.group)}: {item.from} → {item.to}, value {formatValue(item.value)} ·{' '}
                <When iso={item.created_at} />
              </li>
            ) : (
              <li key={`n:${item.id}`} class="history-item" data-type="notification">
                <span class="small muted">notification</span>
                <ul class="deliveries">
                  <DeliveryLine delivery={item.delivery} channelName={nameOf(item.delivery.channel_id)} />
                </ul>
              </li>
            ),
          )}
        </ol>
      )}
      {history.hasMore && (
        <button type="button" disabled={history.loading} onClick={history.loadMore}>
          Load more
        </button>
      )}
    </section>
  );
}
