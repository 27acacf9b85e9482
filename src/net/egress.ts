// The egress guard (docs/api.md, "Metadata" and "Move, remove, pull"): outbound connections made on a
// caller's behalf (pull URLs, metadata `endpoint`s, redirects) may reach only public unicast addresses, plus
// what FERRY_EGRESS_ALLOW names. The check runs on the resolved address of every connection, inside the
// connection itself: a guarded DNS lookup for host names, and a direct check for IP-literal hosts (which skip
// the lookup). So a name that resolves to 127.0.0.1, a DNS answer that changes between a check and the
// connect, or a redirect to a private address are all refused the same way.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { FerryError } from '../errors.js';

export interface Egress {
  /**
   * Throws FerryError('invalid') unless `address` (an IP address) may be reached. `host` is the name
   * the caller asked for, if any: an allowed host name permits any address, and the message names it.
   */
  assertAllowed(address: string, host?: string): void;
  /** A dns.lookup replacement that refuses names resolving to an address that may not be reached. */
  lookup: net.LookupFunction;
  httpAgent: http.Agent;
  httpsAgent: https.Agent;
  dispatcher: Dispatcher;
  /**
   * The connect function of an undici Agent of the caller's own (a store's). Connections to the
   * `trusted` origins, which operator settings name (an OAuth provider's API and content hosts), are
   * made as they are; a connection to any other origin (a redirect's, an upload session's) is checked
   * like the guard's own dispatcher's (docs/api.md, "Outbound calls").
   */
  connect(trusted: readonly string[]): buildConnector.connector;
}

// ---------------------------------------------------------------------------------------------
// Address classification

interface Range {
  base: bigint;
  bits: number;
  kind: string;
}

function parseIPv4(ip: string): bigint | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part)) return undefined;
    const n = Number(part);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

function parseIPv6(input: string): bigint | undefined {
  let ip = input;
  const zone = ip.indexOf('%');
  if (zone >= 0) ip = ip.slice(0, zone);
  // A trailing dotted quad (::ffff:1.2.3.4) counts as the last two groups.
  const lastColon = ip.lastIndexOf(':');
  const tail = ip.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === undefined) return undefined;
    ip = `${ip.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = ip.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(group)) return undefined;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

function v4(cidr: string, kind: string): Range {
  const [ip, bits] = cidr.split('/') as [string, string];
  return { base: parseIPv4(ip) as bigint, bits: Number(bits), kind };
}

function v6(cidr: string, kind: string): Range {
  const [ip, bits] = cidr.split('/') as [string, string];
  return { base: parseIPv6(ip) as bigint, bits: Number(bits), kind };
}

function inRange(value: bigint, width: number, range: Range): boolean {
  const shift = BigInt(width - range.bits);
  return value >> shift === range.base >> shift;
}

// IANA IPv4 Special-Purpose Address Registry, entries not globally reachable, plus multicast.
const V4_RANGES: Range[] = [
  v4('0.0.0.0/8', 'unspecified ("this network")'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'shared (CGNAT)'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignment'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.31.196.0/24', 'AS112'),
  v4('192.52.193.0/24', 'AMT'),
  v4('192.88.99.0/24', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private'),
  v4('192.175.48.0/24', 'AS112'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('255.255.255.255/32', 'broadcast'),
  v4('240.0.0.0/4', 'reserved'),
];

// IPv6: only global unicast (2000::/3) can be public; inside it, the special-purpose blocks are not.
const V6_GLOBAL = v6('2000::/3', 'global unicast');
const V6_RANGES: Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fc00::/7', 'unique-local'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local'),
  v6('ff00::/8', 'multicast'),
  v6('64:ff9b:1::/48', 'local-use NAT64'),
  v6('100::/64', 'discard-only'),
  v6('2001::/23', 'IETF protocol assignment'),
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
  v6('5f00::/16', 'SRv6 SID'),
];
// IPv6 forms that carry an IPv4 address: classified by the IPv4 address inside.
const V6_MAPPED = v6('::ffff:0:0/96', 'IPv4-mapped');
const V6_NAT64 = v6('64:ff9b::/96', 'NAT64');
const V6_6TO4 = v6('2002::/16', '6to4');

function classifyV4(value: bigint): string | undefined {
  return V4_RANGES.find((r) => inRange(value, 32, r))?.kind;
}

/**
 * Why an address may not be reached ("loopback", "private", ...), or undefined for a public unicast
 * address. Anything that is not a valid IP address is "not an IP address".
 */
export function classifyAddress(address: string): string | undefined {
  const ip = stripBrackets(address);
  const family = net.isIP(ip.split('%')[0] ?? '');
  if (family === 4) return classifyV4(parseIPv4(ip) as bigint);
  if (family !== 6) return 'not an IP address';
  const value = parseIPv6(ip);
  if (value === undefined) return 'not an IP address';
  const embedded = (r: Range, v4value: bigint) => {
    const inner = classifyV4(v4value);
    return inner === undefined ? undefined : `${r.kind} ${inner}`;
  };
  if (inRange(value, 128, V6_MAPPED)) return embedded(V6_MAPPED, value & 0xffffffffn);
  if (inRange(value, 128, V6_NAT64)) return embedded(V6_NAT64, value & 0xffffffffn);
  if (inRange(value, 128, V6_6TO4)) return embedded(V6_6TO4, (value >> 80n) & 0xffffffffn);
  const special = V6_RANGES.find((r) => inRange(value, 128, r));
  if (special) return special.kind;
  if (!inRange(value, 128, V6_GLOBAL)) return 'reserved';
  return undefined;
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** The IPv4 value of an IPv4 address or IPv4-mapped IPv6 address, for matching IPv4 allow entries. */
function asV4(ip: string): bigint | undefined {
  if (net.isIPv4(ip)) return parseIPv4(ip);
  const value = parseIPv6(ip);
  if (value !== undefined && inRange(value, 128, V6_MAPPED)) return value & 0xffffffffn;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The allow list

interface AllowList {
  v4: Range[];
  v6: Range[];
  hosts: Set<string>;
}

function normaliseHost(host: string): string {
  return stripBrackets(host).toLowerCase().replace(/\.$/, '');
}

function parseAllow(entries: readonly string[]): AllowList {
  const list: AllowList = { v4: [], v6: [], hosts: new Set() };
  for (const raw of entries) {
    const entry = raw.trim();
    if (entry === '') continue;
    const [ip = '', bitsText] = entry.split('/') as [string, string | undefined];
    const family = net.isIP(stripBrackets(ip));
    if (family === 0) {
      if (bitsText !== undefined || !/^[a-z0-9.-]+$/i.test(entry)) {
        throw new FerryError('invalid', `egress allow entry "${entry}" is neither a CIDR nor a host name`);
      }
      list.hosts.add(normaliseHost(entry));
      continue;
    }
    const width = family === 4 ? 32 : 128;
    const bits = bitsText === undefined ? width : Number(bitsText);
    if (
      !Number.isInteger(bits) ||
      bits < 0 ||
      bits > width ||
      (bitsText !== undefined && !/^\d+$/.test(bitsText))
    ) {
      throw new FerryError('invalid', `egress allow entry "${entry}" has a bad prefix length`);
    }
    const base = family === 4 ? parseIPv4(ip) : parseIPv6(stripBrackets(ip));
    (family === 4 ? list.v4 : list.v6).push({ base: base as bigint, bits, kind: 'allowed' });
  }
  return list;
}

// ---------------------------------------------------------------------------------------------
// The guard

/**
 * Options of every node:http(s) agent that reaches providers. An idle kept-alive socket closes after
 * 4 s (undici's default), or a second before the server's own `Keep-Alive: timeout=N` hint: Node's
 * agent applies the hint only when a timeout is set, and without one it reuses a socket the server is
 * closing at that moment, which fails the request (ECONNRESET).
 */
export const AGENT_OPTIONS = { keepAlive: true, maxSockets: 64, timeout: 4000 } as const;

export function createEgress(allow: readonly string[]): Egress {
  const list = parseAllow(allow);

  function isAllowed(address: string, host: string | undefined): boolean {
    if (host !== undefined && list.hosts.has(normaliseHost(host))) return true;
    const ip = stripBrackets(address);
    if (classifyAddress(ip) === undefined) return true;
    const asV4Value = asV4(ip);
    if (asV4Value !== undefined && list.v4.some((r) => inRange(asV4Value, 32, r))) return true;
    if (net.isIPv6(ip.split('%')[0] ?? '')) {
      const value = parseIPv6(ip);
      if (value !== undefined && list.v6.some((r) => inRange(value, 128, r))) return true;
    }
    return false;
  }

  function refusal(address: string, host: string | undefined): FerryError {
    const why = classifyAddress(address) ?? 'not allowed';
    const shown = host !== undefined && normaliseHost(host) !== normaliseHost(address) ? host : address;
    return new FerryError(
      'invalid',
      `egress to ${shown} (${stripBrackets(address)}) is not allowed: ${why} address; ` +
        'only public addresses and FERRY_EGRESS_ALLOW entries may be reached',
    );
  }

  function assertAllowed(address: string, host?: string): void {
    if (!isAllowed(address, host)) throw refusal(address, host);
  }

  const lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) {
        callback(err, '');
        return;
      }
      // Every answer must pass: a mixed answer is how rebinding tricks slip a private address in.
      const refused = addresses.find((a) => !isAllowed(a.address, hostname));
      if (refused) {
        callback(refusal(refused.address, hostname) as NodeJS.ErrnoException, '');
        return;
      }
      if (options.all) callback(null, addresses);
      else {
        const first = addresses[0];
        if (!first)
          callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        else callback(null, first.address, first.family);
      }
    });
  };

  /** Checks an IP-literal host (which skips lookup) before any socket is opened. */
  function literalRefusal(host: string | undefined): FerryError | undefined {
    if (host === undefined) return undefined;
    const bare = stripBrackets(host);
    if (net.isIP(bare.split('%')[0] ?? '') === 0) return undefined;
    return isAllowed(bare, undefined) ? undefined : refusal(bare, undefined);
  }

  /**
   * An agent's literal-host check: a refused host is reported through the callback, so the request
   * emits 'error' instead of throwing; true when it was refused.
   */
  function refusedLiteral(
    host: string | undefined,
    callback: ((err: Error | null, socket: Duplex) => void) | undefined,
  ): boolean {
    const refused = literalRefusal(host);
    if (!refused) return false;
    process.nextTick(() => callback?.(refused, undefined as unknown as Duplex));
    return true;
  }

  type Create = (
    options: never,
    callback: (err: Error | null, socket?: Duplex) => void,
  ) => Duplex | undefined;

  class GuardedHttpAgent extends http.Agent {
    override createConnection(
      options: net.NetConnectOpts & { host?: string },
      callback?: (err: Error | null, socket: Duplex) => void,
    ): Duplex {
      if (refusedLiteral(options.host, callback)) return undefined as unknown as Duplex;
      return net.createConnection({ ...options, lookup } as net.NetConnectOpts);
    }
  }

  class GuardedHttpsAgent extends https.Agent {
    override createConnection(
      options: tls.ConnectionOptions,
      callback?: (err: Error | null, socket: Duplex) => void,
    ): Duplex {
      if (refusedLiteral(options.host, callback)) return undefined as unknown as Duplex;
      return (https.Agent.prototype.createConnection as unknown as Create).call(
        this,
        { ...options, lookup } as never,
        callback as never,
      ) as Duplex;
    }
  }

  const connector = buildConnector({ lookup } as buildConnector.BuildOptions);
  const guardedConnect: buildConnector.connector = (options, callback) => {
    const refused = literalRefusal(options.hostname);
    if (refused) {
      callback(refused, null);
      return;
    }
    connector(options, callback);
  };
  const dispatcher = new Agent({ connect: guardedConnect });

  function connect(trusted: readonly string[]): buildConnector.connector {
    const origins = new Set(trusted.map((url) => new URL(url).origin));
    if (origins.size === 0) return guardedConnect;
    const plain = buildConnector({});
    return (options, callback) => {
      const origin = options.host === undefined ? '' : `${options.protocol}//${options.host}`;
      if (origins.has(origin)) plain(options, callback);
      else guardedConnect(options, callback);
    };
  }

  return {
    assertAllowed,
    lookup,
    httpAgent: new GuardedHttpAgent(AGENT_OPTIONS),
    httpsAgent: new GuardedHttpsAgent(AGENT_OPTIONS),
    dispatcher,
    connect,
  };
}
