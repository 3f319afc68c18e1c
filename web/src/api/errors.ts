/** A failure answer of the API in DECISIONS.md §5's envelope, or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The rest of the envelope: `position` of a SOQL parse error, `quotas`, `retry_after`… */
    readonly details: Record<string, unknown> = {},
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** Reads an error envelope from a response that is not ok. */
export async function errorFrom(response: Response): Promise<ApiError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  const retry = Number(response.headers.get('retry-after'));
  const message = typeof error?.message === 'string' ? error.message : `the server answered ${response.status} ${response.statusText}`;
  const code = typeof error?.code === 'string' ? error.code : 'internal';
  return new ApiError(response.status, code, message, error ?? {}, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

/** What to show a person for any thrown value. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
