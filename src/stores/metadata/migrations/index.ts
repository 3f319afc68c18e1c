import type { Migration } from 'kysely';
import * as foundation from './0001-foundation.js';
import * as media from './0002-media.js';
import * as events from './0003-events.js';
import * as announced from './0004-announced.js';
import * as uploadReservations from './0005-upload-reservations.js';
import * as idempotencyKeys from './0006-idempotency-keys.js';
import * as dashboard from './0007-dashboard.js';
import * as tokenOwners from './0008-token-owners.js';
import * as filesDeleted from './0009-files-deleted.js';
import * as notifications from './0010-notifications.js';
import * as monitors from './0011-monitors.js';
import * as savedSearches from './0012-saved-searches.js';
import * as monitorEvaluated from './0013-monitor-evaluated.js';
import * as audit from './0014-audit.js';
import * as sso from './0015-sso.js';
import * as hotKeys from './0016-hot-keys.js';
import * as monitorValues from './0017-monitor-values.js';
import * as tokenIndexesPartial from './0018-token-indexes-partial.js';
import * as auditAppend from './0019-audit-append.js';
import * as ssoDomainVerification from './0020-sso-domain-verification.js';
import * as monitorLastMatch from './0021-monitor-last-match.js';
import * as hotKeyTurns from './0022-hot-key-turns.js';

/**
 * Every metadata migration, in order. A capability that needs tables adds its file here;
 * names sort in the order they must run.
 */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-media': media,
  '0003-events': events,
  '0004-announced': announced,
  '0005-upload-reservations': uploadReservations,
  '0006-idempotency-keys': idempotencyKeys,
  '0007-dashboard': dashboard,
  '0008-token-owners': tokenOwners,
  '0009-files-deleted': filesDeleted,
  '0010-notifications': notifications,
  '0011-monitors': monitors,
  '0012-saved-searches': savedSearches,
  '0013-monitor-evaluated': monitorEvaluated,
  '0014-audit': audit,
  '0015-sso': sso,
  '0016-hot-keys': hotKeys,
  '0017-monitor-values': monitorValues,
  '0018-token-indexes-partial': tokenIndexesPartial,
  '0019-audit-append': auditAppend,
  '0020-sso-domain-verification': ssoDomainVerification,
  '0021-monitor-last-match': monitorLastMatch,
  '0022-hot-key-turns': hotKeyTurns,
};
