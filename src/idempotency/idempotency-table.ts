/** Metadata table `idempotency_keys` (migration 0006): one row per (token, Idempotency-Key). */
export interface IdempotencyKeysTable {
  /** The token the key belongs to: the same key from another token is another row. */
  token_id: string;
  idem_key: string;
  /** `POST /v1/datasets/x/ingest`: a key belongs to one endpoint. */
  endpoint: string;
  /** Hex SHA-256 of the request body as received; null while a streamed body is still arriving. */
  request_sha256: string | null;
  request_bytes: number | null;
  /** running: a process holds the claim; done: `answer` holds the answer; failed: answered 5xx, the key is free. */
  state: 'running' | 'done' | 'failed';
  /** Random per claim: the fence every later write of its holder checks. */
  claim_id: string;
  /** `<host>-<pid>` of the holder (shared/process-owner.ts). */
  owner: string;
  /** Random per process start, so a restarted server that got the same pid is told apart. */
  owner_instance: string;
  /** The holder renews it while it runs; past it any process may take the claim over. */
  lease_until: string;
  /** Random per key, kept when a claim is taken over: derived event ids of a retried ingest repeat. */
  nonce: string;
  status: number | null;
  content_type: string | null;
  /** The answer body, sealed with a key derived from the caller's token (sealed-answer.ts). */
  answer: string | null;
  created_at: string;
  expires_at: string;
}

declare module '../stores/metadata/schema.js' {
  interface Database {
    idempotency_keys: IdempotencyKeysTable;
  }
}
