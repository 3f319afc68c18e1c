import { ConfigError } from '../../config/config.js';
import { defaultSweepGraceMs } from './blob-store.js';

/** What `s3://bucket/prefix?endpoint=…&region=…&path_style=…` says, checked (parseS3Url). */
export interface S3BlobStoreOptions {
  bucket: string;
  /** Segments under which every key is stored, without slashes at either end; '' for none. */
  prefix: string;
  /** An S3-compatible server (MinIO, Swift, Ceph…); undefined for AWS itself. */
  endpoint: string | undefined;
  region: string;
  /** `endpoint/bucket/key` rather than `bucket.endpoint/key`: what most S3-compatible servers want. */
  forcePathStyle: boolean;
  /** Multipart uploads and unknown objects younger than this are never swept. */
  sweepGraceMs: number;
  /** Most a request may take until the store's answer starts (a part upload included). */
  requestTimeoutMs: number;
}

const fail = (message: string): never => {
  throw new ConfigError('OPS_BLOB_URL', message);
};

/**
 * Reads OPS_BLOB_URL's s3:// form. Besides the URL: AWS_REGION (or AWS_DEFAULT_REGION) when no
 * `region` is given, AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) when no `endpoint` is; the
 * credentials come from the AWS SDK's default chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
 * a profile, an instance role). Anything malformed is a ConfigError naming OPS_BLOB_URL.
 */
export function parseS3Url(raw: string, env: Record<string, string | undefined> = process.env): S3BlobStoreOptions {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('not a valid URL');
  }
  if (url.protocol !== 's3:') fail(`expected an s3:// URL, got ${url.protocol}`);
  const bucket = url.hostname;
  // S3's own rule for bucket names (what path-style and virtual-host addressing both accept).
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes('..')) {
    fail(`"${bucket}" is not a valid bucket name (3 to 63 characters: lower-case letters, digits, dots and hyphens); write s3://bucket/prefix`);
  }
  if (url.username || url.password || url.port) fail('an s3:// URL has no user, password or port: credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, the server from ?endpoint=');
  const prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, '');
  if (prefix && !prefix.split('/').every((p) => /^[A-Za-z0-9._-]+$/.test(p) && p !== '.' && p !== '..')) {
    fail(`the prefix "${prefix}" must be /-separated segments of letters, digits, ".", "_" and "-"`);
  }
  const known = new Set(['endpoint', 'region', 'path_style', 'sweep_grace_s', 'timeout_ms']);
  for (const name of url.searchParams.keys()) {
    if (!known.has(name)) fail(`unknown option "${name}"; the options are ${[...known].join(', ')}`);
  }
  const param = (name: string) => url.searchParams.get(name) ?? undefined;
  const endpoint = param('endpoint') ?? (env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined);
  if (endpoint !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpoint);
    } catch {
      // refused below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.pathname.length > 1) {
      fail(`endpoint "${endpoint}" must be an http:// or https:// address without a path, e.g. ?endpoint=http://127.0.0.1:9000`);
    }
  }
  const region = param('region') ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1');
  if (!/^[a-z0-9-]{1,64}$/.test(region)) fail(`region "${region}" is not a region name (e.g. us-east-1)`);
  const pathStyle = param('path_style');
  if (pathStyle !== undefined && pathStyle !== 'true' && pathStyle !== 'false') fail(`path_style must be true or false, got "${pathStyle}"`);
  const whole = (name: string, fallback: number, min: number, max: number) => {
    const value = param(name);
    if (value === undefined) return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) fail(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
    return Number(value);
  };
  return {
    bucket,
    prefix,
    endpoint: endpoint?.replace(/\/+$/, ''),
    region,
    // A custom endpoint is nearly always a server that wants path-style requests.
    forcePathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === 'true',
    sweepGraceMs: whole('sweep_grace_s', defaultSweepGraceMs / 1000, 0, 30 * 86_400) * 1000,
    requestTimeoutMs: whole('timeout_ms', 30_000, 100, 600_000),
  };
}

