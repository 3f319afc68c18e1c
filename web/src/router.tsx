// Path routing under /dashboard/ with the History API: a handful of pages need no library.
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const base = '/dashboard';

/** The page's path below /dashboard (`/`, `/media`, `/datasets/game`) and its query. */
export interface Route {
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const path = location.pathname.startsWith(base) ? location.pathname.slice(base.length) || '/' : '/';
  return { path: path.length > 1 ? path.replace(/\/$/, '') : path, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();
addEventListener('popstate', () => listeners.forEach((l) => l()));

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = `${base}${path === '/' ? '/' : path}`;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  listeners.forEach((l) => l());
  window.scrollTo(0, 0);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    const update = () => setRoute(current());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return route;
}

/** An anchor that navigates without reloading (and still opens in a new tab with a modifier). */
export function Link(props: { href: string; children: ComponentChildren; class?: string; title?: string; 'aria-current'?: 'page'; 'data-testid'?: string }): JSX.Element {
  const { href, children, ...rest } = props;
  const onClick = (event: MouseEvent) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={`${base}${href === '/' ? '/' : href}`} onClick={onClick}>
      {children}
    </a>
  );
}
