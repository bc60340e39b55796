/**
 * The one DNS-rebinding check of faultline's HTTP servers (dashboard, metrics, the HTTP and MCP
 * proxies, mock-tools). A web page can reach loopback ports from the browser: it rebinds its own
 * name to 127.0.0.1 and its requests then carry that name in `Host`. So a server bound to loopback
 * answers only to loopback names, its bound address and the names its user added on purpose (a
 * reverse proxy in front of it); bound elsewhere, the user exposed it and any name goes.
 */
import { isIP } from 'node:net';

/** Host names every loopback-bound server answers to. */
export const LOOPBACK_HOST_NAMES: readonly string[] = ['127.0.0.1', 'localhost', '[::1]'];

/** What a server answers to: {@link hostAllowed} asks it. */
export interface HostAllowlist {
  /** Whether a request with this `Host` header (undefined: none sent) may be served. */
  allows(header: string | undefined): boolean;
}

const ANY_HOST: HostAllowlist = { allows: () => true };

/** Headers already decided, by their exact text: a client sends the same Host on every request. */
const DECIDED_LIMIT = 64;

class NamedHosts implements HostAllowlist {
  private readonly decided = new Map<string, boolean>();
  constructor(private readonly names: ReadonlySet<string>) {}

  allows(header: string | undefined): boolean {
    // Only a raw HTTP/1.0 client sends none; a browser, which rebinding needs, always does.
    if (header === undefined) return true;
    let allowed = this.decided.get(header);
    if (allowed === undefined) {
      allowed = this.names.has(hostName(header));
      // Bounded against a client that sends a new name each time.
      if (this.decided.size >= DECIDED_LIMIT) this.decided.clear();
      this.decided.set(header, allowed);
    }
    return allowed;
  }
}

/** Loopback addresses and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || (isIP(h) === 4 && h.startsWith('127.'));
}

/** `name`, `name:port`, `[v6]` or `[v6]:port` as the name a Host header is compared by. */
function hostName(text: string): string {
  const h = text.trim().toLowerCase();
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end < 0 ? h : h.slice(0, end + 1);
  }
  const colon = h.lastIndexOf(':');
  if (colon < 0) return h;
  // More than one colon: a bare IPv6 address (a bound address, a configured name).
  return h.indexOf(':') === colon ? h.slice(0, colon) : `[${h}]`;
}

/**
 * The names a server bound to `boundHost` answers to: any when it is not on loopback; else the
 * loopback names, the bound address and `extra` (names of hosts that front it deliberately).
 */
export function hostAllowlist(boundHost: string, extra: readonly string[] = []): HostAllowlist {
  if (!isLoopbackHost(boundHost)) return ANY_HOST;
  return namedHosts([...LOOPBACK_HOST_NAMES, boundHost, ...extra]);
}

/** Exactly these names (compared without a port, in any case), or any. */
export function namedHosts(names: readonly string[] | 'any'): HostAllowlist {
  return names === 'any' ? ANY_HOST : new NamedHosts(new Set(names.map(hostName)));
}

/** Whether a request with this `Host` header may be served (a request without one may). */
export function hostAllowed(header: string | undefined, allowed: HostAllowlist): boolean {
  return allowed.allows(header);
}

/** The one line a refused request is told, naming what it sent. */
export function refusedHostMessage(header: string | undefined, what: string): string {
  return `refused: Host ${JSON.stringify(header)} is not this ${what}'s; reach it by 127.0.0.1 or localhost (or add the name to its allowed hosts)`;
}
