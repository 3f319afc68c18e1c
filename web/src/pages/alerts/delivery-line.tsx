// One notification sent to a channel, with every attempt (channel lists and monitor history).
import type { JSX } from 'preact';
import { When } from '../../components/copy-field';
import type { Delivery } from './model';

export function DeliveryLine(props: { delivery: Delivery; channelName?: string }): JSX.Element {
  const d = props.delivery;
  return (
    <li class="delivery" data-delivery-id={d.id} data-state={d.state}>
      <div>
        <span class={`state state-${d.state}`}>{d.state}</span> <strong>{d.status}</strong>
        {props.channelName && <span> to {props.channelName}</span>} · <When iso={d.created_at} />
        <span class="muted small mono"> {d.id}</span>
      </div>
      {d.attempts.length > 0 && (
        <ol class="attempts small">
          {d.attempts.map((a, i) => (
            <li key={i}>
              attempt {i + 1}: {a.status === null ? 'no answer' : `HTTP ${a.status}`} in {a.latency_ms} ms · <When iso={a.attempted_at} />
              {a.error && <span class="note error"> — {a.error}</span>}
            </li>
          ))}
        </ol>
      )}
      {d.state === 'pending' && d.next_attempt_at && (
        <div class="small muted">
          next attempt <When iso={d.next_attempt_at} />
        </div>
      )}
    </li>
  );
}
