// Media uploads with progress: POST /v1/media as multipart (part `file`, fields `folder` and
// `tags`) through XMLHttpRequest, whose upload events give progress that fetch does not; and the
// server's refusals (413, 415, 402 quota_exceeded…) put into words a person can act on.
import { tokens } from '../../api/client';
import { ApiError } from '../../api/errors';
import type { components } from '../../api/schema';

export type MediaFile = components['schemas']['File'];
export type ListedFile = components['schemas']['ListedFile'];

export interface UploadHandle {
  promise: Promise<MediaFile>;
  abort(): void;
}

/** An ApiError from an XHR answer that is not 201 (the error envelope of DECISIONS.md §5). */
function errorOf(xhr: XMLHttpRequest): ApiError {
  let error: Record<string, unknown> | undefined;
  try {
    error = (JSON.parse(xhr.responseText) as { error?: Record<string, unknown> }).error;
  } catch {
    error = undefined;
  }
  const retry = Number(xhr.getResponseHeader('retry-after'));
  return new ApiError(
    xhr.status,
    typeof error?.code === 'string' ? error.code : 'internal',
    typeof error?.message === 'string' ? error.message : `the server answered ${xhr.status} ${xhr.statusText}`,
    error ?? {},
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
}

/**
 * Sends one file; `onProgress(loaded, total)` follows the request body (the whole multipart
 * body, so `total` is a little more than the file's size). Resolves with the File record.
 */
export function uploadFile(file: File, fields: { folder: string; tags: string[] }, onProgress: (loaded: number, total: number) => void): UploadHandle {
  let xhr: XMLHttpRequest | undefined;
  let aborted = false;
  const cancelled = () => new ApiError(0, 'aborted', 'the upload was cancelled');
  const send = (authorization: Record<string, string>) =>
    new Promise<MediaFile>((resolve, reject) => {
      if (aborted) return reject(cancelled());
      const form = new FormData();
      if (fields.folder) form.append('folder', fields.folder);
      for (const tag of fields.tags) form.append('tags', tag);
      form.append('file', file, file.name);
      const request = new XMLHttpRequest();
      xhr = request;
      request.open('POST', '/v1/media');
      for (const [name, value] of Object.entries(authorization)) request.setRequestHeader(name, value);
      request.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
      request.onload = () => {
        if (request.status !== 201) return reject(errorOf(request));
        try {
          resolve(JSON.parse(request.responseText) as MediaFile);
        } catch {
          reject(new ApiError(request.status, 'internal', 'the server answered with something that is not a file record'));
        }
      };
      request.onerror = () => reject(new ApiError(0, 'network', 'the upload was cut off before the server answered; check the connection and try again'));
      request.onabort = () => reject(cancelled());
      request.send(form);
    });
  const promise = (async () => {
    try {
      return await send(await tokens.headers());
    } catch (error) {
      // The short-lived token ended sooner than the page expected: once more with a new one.
      if (!(error instanceof ApiError) || error.status !== 401) throw error;
      tokens.invalidate();
      return send(await tokens.headers());
    }
  })();
  return {
    promise,
    abort() {
      aborted = true;
      xhr?.abort();
    },
  };
}

/** 1 MB = 1,000,000 bytes, as in SPEC.md's limits (DECISIONS.md §8). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} ${n === 1 ? 'byte' : 'bytes'}`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = n / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value >= 100 ? Math.round(value) : value.toFixed(1).replace(/\.0$/, '')} ${units[unit]}`;
}

export const supportedTypes = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'video/mp4', 'video/webm', 'application/pdf'];
const supportedInWords = 'PNG, JPEG, GIF or WebP images, MP4 or WebM video, and PDF documents';

const metricNames: Record<string, string> = {
  storage_bytes: 'storage',
  events_month: 'events this month',
  queries_month: 'queries this month',
};

interface QuotaDetail {
  metric: string;
  used: number;
  limit: number | null;
}

/**
 * Why an upload of `file` was refused, in words: what happened and what to do. `plan` is the
 * organisation's plan when known (GET /v1/usage), for quota errors.
 */
export function explainUploadError(error: unknown, file: { name: string; size: number; type: string }, plan?: string): string {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : String(error);
  const d = error.details;
  switch (error.code) {
    case 'file_too_large':
    case 'too_large': {
      const limit = typeof d.limit === 'number' ? d.limit : undefined;
      return (
        `Too large: this file is ${formatBytes(file.size)}` +
        (limit !== undefined ? ` and the most allowed for it is ${formatBytes(limit)}` : '') +
        ` — the smaller of the plan's limit per file${plan ? ` (${plan} plan)` : ''} and the limit for its type (images and PDF 50 MB, video 500 MB). (${error.message})`
      );
    }
    case 'unsupported_type': {
      const detected = typeof d.detected === 'string' ? d.detected : undefined;
      const declared = typeof d.declared === 'string' && d.declared ? d.declared : file.type || 'unknown';
      // `detected` is set when the bytes were read: they are another type than the file says, or none we know.
      const what = !detected
        ? `its type is ${declared}`
        : detected === 'application/octet-stream'
          ? `it says ${declared} but its contents are not a file of any supported type`
          : `it says ${declared} but its contents are ${detected}`;
      return `This kind of file cannot be uploaded: ${what}. Supported are ${supportedInWords}. (${error.message})`;
    }
    case 'quota_exceeded': {
      const metric = typeof d.metric === 'string' ? d.metric : 'storage_bytes';
      const quota = Array.isArray(d.quotas) ? (d.quotas as QuotaDetail[]).find((q) => q.metric === metric) : undefined;
      const name = metricNames[metric] ?? metric;
      const amount = (v: number) => (metric === 'storage_bytes' ? formatBytes(v) : v.toLocaleString('en'));
      const usage = quota && quota.limit !== null ? `: ${amount(quota.used)} of ${amount(quota.limit)} used` : '';
      const onPlan = plan ? ` on the ${plan} plan` : '';
      if (metric === 'storage_bytes') {
        return `Not enough storage left${onPlan}${usage}, and this file needs ${formatBytes(file.size)}. Deleted files count until they are removed for good (30 days after deletion); upgrade the plan for more room.`;
      }
      return `The organisation's quota of ${name} is used up${onPlan}${usage}. Upgrade the plan or wait for the next month.`;
    }
    case 'forbidden':
      return `Your role cannot upload files (${error.message}).`;
    case 'unauthorized':
      return 'Your session has ended; sign in again and retry.';
    case 'storage_error':
      return `The server could not store the file; try again in a moment. (${error.message})`;
    case 'aborted':
      return 'Cancelled.';
    default:
      if (error.status === 429 && error.retryAfterSeconds) return `Too many requests; try again in ${error.retryAfterSeconds} s. (${error.message})`;
      return error.message;
  }
}
