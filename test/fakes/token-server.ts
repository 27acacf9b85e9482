// The four OAuth providers' token endpoints on one loopback server, each a FakeOAuth in its provider's
// own format (./token-formats.ts), at /<provider>/token; for the refresher's tests, which need the
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
      const provider = /^\/(\w+)\/token$/.exec(req.url ?? '')?.[1] as TokenProvider | undefined;
      const oauth = provider ? this.oauth[provider] : undefined;
      if (!oauth) {
        res.statusCode = 404;
        res.end();
        return;
      }
      oauth.handleToken(req, res).catch((err: unknown) => res.destroy(err as Error));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#server = server;
    this.#base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  tokenUrl(provider: TokenProvider): string {
    return `${this.#base}/${provider}/token`;
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
