import { errors, request, type Dispatcher } from 'undici';
import { AddressRefusedError } from '../outbound/address-policy.js';

/** What one HTTP attempt gave: a status and what the receiver said, or why there was none. */
export interface AttemptAnswer {
  status: number | null;
  headers: Record<string, string | undefined>;
  /** The first bytes of the answer's body (Discord's retry_after lives there). */
  body: string;
  latencyMs: number;
  error: string | null;
  /** An error that must not be retried (an address refused by the policy). */
  permanent: boolean;
  /** The attempt was cut short because this process stops: not an attempt at all. */
  interrupted: boolean;
}

const maxAnswerBytes = 16 * 1024;

async function readSome(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxAnswerBytes) break;
  }
  // Leaving early destroys the stream: nothing more is read from a receiver that talks too much.
  body.destroy();
  return Buffer.concat(chunks).subarray(0, maxAnswerBytes).toString('utf8');
}

const describe = (error: unknown): string => {
  if (error instanceof AddressRefusedError) return error.message;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code ?? cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
};

/**
 * One POST of a rendered body, through the guarded dispatcher, within `timeoutMs` for the whole
 * exchange (connecting, the answer's head and the first bytes of its body). Never throws: a
 * failure is an answer without status and with its error.
 */
export async function postOnce(
  dispatcher: Dispatcher,
  target: { url: string; body: string; headers: Record<string, string> },
  timeoutMs: number,
  stopping: AbortSignal,
): Promise<AttemptAnswer> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, stopping]);
  const latency = () => Math.round(performance.now() - started);
  try {
    const answer = await request(target.url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', 'user-agent': 'opsplatform-notifications/1', ...target.headers },
      body: target.body,
      signal,
    });
    const body = await readSome(answer.body);
    const headers = Object.fromEntries(Object.entries(answer.headers).map(([k, v]) => [k.toLowerCase(), Array.isArray(v) ? v.join(', ') : v]));
    const redirect = answer.statusCode >= 300 && answer.statusCode < 400 ? `redirect not followed (to ${headers.location ?? 'nowhere'})` : null;
    return { status: answer.statusCode, headers, body, latencyMs: latency(), error: redirect, permanent: false, interrupted: false };
  } catch (error) {
    if (stopping.aborted) return { status: null, headers: {}, body: '', latencyMs: latency(), error: 'interrupted', permanent: false, interrupted: true };
    const timedOut = timeout.aborted || error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError;
    const refused = error instanceof AddressRefusedError || (error as { cause?: unknown }).cause instanceof AddressRefusedError;
    return {
      status: null,
      headers: {},
      body: '',
      latencyMs: latency(),
      error: timedOut ? `timeout: no answer within ${timeoutMs} ms` : describe(refused && !(error instanceof AddressRefusedError) ? (error as { cause: unknown }).cause : error),
      permanent: refused,
      interrupted: false,
    };
  }
}
