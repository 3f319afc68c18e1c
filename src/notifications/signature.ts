import crypto from 'node:crypto';

/**
 * Webhook signatures in Stripe's form (DECISIONS.md §18): `X-Ops-Signature: t=<unix seconds>,v1=<hex
 * HMAC-SHA256 of "<t>.<body>">` keyed with the channel's `whsec_…` secret (the whole string).
 * A receiver recomputes it over the raw body and rejects an old `t` (replays).
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** A receiver's check (docs/notifications.md shows it; the tests' receivers use it): constant-time, with a tolerance on `t`. */
export function verifySignature(secret: string, body: string, header: string | undefined, nowSeconds: number, toleranceSeconds = 300): boolean {
  if (!header) return false;
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const given = parts.get('v1') ?? '';
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = signatureHeader(secret, body, t).split('v1=')[1]!;
  return given.length === expected.length && crypto.timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** A new signing secret: `whsec_` and 32 random bytes in base64url. */
export const newSigningSecret = (): string => `whsec_${crypto.randomBytes(32).toString('base64url')}`;
