// The connections that have not (yet) carried a valid API key (docs/security.md, "Clients without a
// key"): a new connection, one that carried only public requests (share links, /healthz), and one still
// sending its headers. At most FERRY_HTTP_KEYLESS_CONNECTIONS of them are open at once, so the rest of
// FERRY_HTTP_MAX_CONNECTIONS is left to clients with a key, which no number of clients without one can
// take. Nothing is known of a connection before its headers, so a new one is never refused for being
// over this limit (it may carry a key): it closes a keyless one instead, the oldest of the address that
// holds the most. A client that holds many connections without a key loses its own first, and a
// newcomer from an address that holds few is served. A connection leaves the count when a request on it
// is authenticated (src/http/auth.ts) or when it closes.
import type { Socket } from 'node:net';

export class KeylessConnections {
  /** Each address's keyless connections, oldest first. */
  readonly #byAddress = new Map<string, Set<Socket>>();
  /** The addresses by how many keyless connections each holds (the count's Set in the order they reached it). */
  readonly #byCount = new Map<number, Set<string>>();
  readonly #addressOf = new Map<Socket, string>();
  /** The most keyless connections one address holds. */
  #most = 0;

  constructor(readonly limit: number) {}

  get size(): number {
    return this.#addressOf.size;
  }

  /**
   * Counts a new connection from `address`; at the limit, first takes out the oldest keyless connection
   * of the address that holds the most and answers it, for the caller to close.
   */
  add(socket: Socket, address: string): Socket | undefined {
    const evicted = this.size >= this.limit ? this.#oldestOfBusiest() : undefined;
    if (evicted) this.remove(evicted);
    const sockets = this.#byAddress.get(address) ?? new Set<Socket>();
    this.#byAddress.set(address, sockets);
    sockets.add(socket);
    this.#addressOf.set(socket, address);
    this.#move(address, sockets.size - 1, sockets.size);
    return evicted;
  }

  /** No longer keyless: it carried a valid key, or it closed. Once is enough; again does nothing. */
  remove(socket: Socket): void {
    const address = this.#addressOf.get(socket);
    if (address === undefined) return;
    this.#addressOf.delete(socket);
    const sockets = this.#byAddress.get(address);
    if (!sockets) return;
    sockets.delete(socket);
    if (sockets.size === 0) this.#byAddress.delete(address);
    this.#move(address, sockets.size + 1, sockets.size);
  }

  #oldestOfBusiest(): Socket | undefined {
    const address = this.#byCount.get(this.#most)?.values().next().value;
    if (address === undefined) return undefined;
    return this.#byAddress.get(address)?.values().next().value;
  }

  /** Moves an address from the addresses holding `from` connections to those holding `to`. */
  #move(address: string, from: number, to: number): void {
    if (from > 0) {
      const was = this.#byCount.get(from);
      was?.delete(address);
      if (was?.size === 0) this.#byCount.delete(from);
    }
    if (to > 0) {
      const now = this.#byCount.get(to) ?? new Set<string>();
      this.#byCount.set(to, now);
      now.add(address);
    }
    // Counts move by one, so the most moves by at most one: up with this address, or down to it.
    if (to > this.#most) this.#most = to;
    else if (from === this.#most && !this.#byCount.has(from)) this.#most = to;
  }
}
