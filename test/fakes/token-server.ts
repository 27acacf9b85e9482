// The four OAuth providers' token endpoints on one loopback server, each a FakeOAuth in its provider's
// own format (./token-formats.ts), at /<provider>/token, or /<provider>/<tag>/token so that a test
// with several processes can tell which one asked (tagOf); for the refresher's tests, which need the
// token endpoints and not the providers' APIs.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeOAuth, type FakeOAuthOptions } from './oauth.js';
import type { TokenProvider } from './token-formats.js';

export const TOKEN_PROVIDERS: readonly TokenProvider[] = ['dropbox', 'drive', 'onedrive', 'box'];

/** Each provider's rotation (docs/api.md: dropbox and drive keep their refresh token). */
const ROTATION = { dropbox: 'stable', drive: 'stable', onedrive: 'rotating', box: 'single-use' } as const;

export class FakeTokenServer {
  readonly oauth: Record<TokenProvider, FakeOAuth>;
  /** Requests being answered now, per tag ('' for untagged). */
  readonly inFlight = new Map<string, number>();
  #server: http.Server | undefined;
  #base = '';

  constructor(options: Pick<FakeOAuthOptions, 'now' | 'accessTokenTtlSeconds'> = {}) {
    const make = (provider: TokenProvider) =>
      new FakeOAuth({
        ...options,
        provider,
        rotation: ROTATION[provider],
        clientId: `${provider}-client`,
        clientSecret: `${provider}-client-secret`,
      });
    this.oauth = {
      dropbox: make('dropbox'),
      drive: make('drive'),
      onedrive: make('onedrive'),
      box: make('box'),
    };
  }

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      const match = /^\/(\w+)(?:\/([\w-]+))?\/token$/.exec(req.url ?? '');
      const oauth = match ? this.oauth[match[1] as TokenProvider] : undefined;
      if (!oauth) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const tag = match?.[2] ?? '';
      this.inFlight.set(tag, (this.inFlight.get(tag) ?? 0) + 1);
      res.once('close', () => this.inFlight.set(tag, (this.inFlight.get(tag) ?? 1) - 1));
      oauth.handleToken(req, res).catch((err: unknown) => res.destroy(err as Error));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  tokenUrl(provider: TokenProvider, tag?: string): string {
    return tag ? `${this.#base}/${provider}/${tag}/token` : `${this.#base}/${provider}/token`;
  }

  /** The tag of a request's URL ('' when untagged). */
  static tagOf(req: http.IncomingMessage): string {
    return /^\/\w+\/([\w-]+)\/token$/.exec(req.url ?? '')?.[1] ?? '';
  }

  /** Requests being answered now, of every tag. */
  busy(): number {
    let n = 0;
    for (const count of this.inFlight.values()) n += count;
    return n;
  }

  /** FERRY_<PROVIDER>_TOKEN_URL and the client settings the fakes demand, for every provider. */
  env(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const provider of TOKEN_PROVIDERS) {
      const prefix = `FERRY_${provider.toUpperCase()}_`;
      env[`${prefix}TOKEN_URL`] = this.tokenUrl(provider);
      env[`${prefix}CLIENT_ID`] = `${provider}-client`;
      env[`${prefix}CLIENT_SECRET`] = `${provider}-client-secret`;
    }
    return env;
  }

  async close(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }
}
