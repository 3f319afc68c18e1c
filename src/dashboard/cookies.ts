/** The session cookie (docs/dashboard.md): the session's 32-byte secret, base64url. */
export const sessionCookie = 'ops_session';

/** The value of one cookie in a Cookie header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** httpOnly, SameSite=Strict, Path=/dashboard; Secure when the public address is https. */
export function sessionCookieHeader(value: string, options: { secure: boolean; maxAgeSeconds: number }): string {
  return [
    `${sessionCookie}=${value}`,
    'Path=/dashboard',
    'HttpOnly',
    'SameSite=Strict',
    ...(options.secure ? ['Secure'] : []),
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
  ].join('; ');
}

export const clearedSessionCookie = (secure: boolean): string => sessionCookieHeader('', { secure, maxAgeSeconds: 0 });
