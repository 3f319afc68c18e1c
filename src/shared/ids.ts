import crypto from 'node:crypto';
import { monotonicFactory } from 'ulidx';

const ulid = monotonicFactory();

/** Prefixed ULIDs (DECISIONS.md §1); organisations and projects are plain ULIDs. */
export const newId = {
  org: () => ulid(),
  project: () => ulid(),
  file: () => `f_${ulid()}`,
  user: () => `usr_${ulid()}`,
  role: () => `rol_${ulid()}`,
  token: () => `tok_${ulid()}`,
  case: () => `cas_${ulid()}`,
  log: () => `log_${ulid()}`,
  app: () => `app_${ulid()}`,
  dataset: () => `ds_${ulid()}`,
  reservation: () => `rsv_${ulid()}`,
  request: () => `req_${requestPrefix}${(requestCounter++).toString(36).padStart(8, '0')}`,
};

// Request ids need to be unique, not secret: a random per-process prefix and a counter
// cost nothing per request, where a ULID draws random bytes every time.
const requestPrefix = crypto.randomBytes(8).toString('hex');
let requestCounter = 0;

/** A canonical UUID, lower case (how the API writes them and the event store reads them). */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const isUuid = (value: string): boolean => uuidPattern.test(value);
const uuidAnyCasePattern = new RegExp(uuidPattern.source, 'i');
/** A UUID in either case, as clients may send one (normalise with toLowerCase before storing). */
export const isUuidAnyCase = (value: string): boolean => uuidAnyCasePattern.test(value);
