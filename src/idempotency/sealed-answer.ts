import crypto from 'node:crypto';

/**
 * Remembered answers are sealed (AES-256-GCM) under a key derived from the caller's own token,
 * which the server never stores (only its SHA-256): a copy of the database does not reveal them.
 * That matters for POST /tokens, whose answer is a new token's secret, shown once.
 */
export function answerKey(bearerToken: string, idempotencyKey: string): Buffer {
  return crypto.createHmac('sha256', bearerToken).update(`opsplatform idempotency answer\0${idempotencyKey}`).digest();
}

/**
 * The answer's bytes (JSON text, or protobuf) as base64 text (a text column in both databases).
 * `context` (token id and key) is authenticated with them: a sealed answer moved to another row
 * does not open.
 */
export function seal(key: Buffer, context: string, body: Buffer): string {
  const iv = crypto.randomBytes(12);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const sealed = Buffer.concat([cipher.update(body), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
}

export function unseal(key: Buffer, context: string, sealed: string): Buffer {
  const bytes = Buffer.from(sealed, 'base64');
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(context));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
}
