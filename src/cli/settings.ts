// Where the client finds its server and key: FERRY_URL and FERRY_API_KEY win, then the file `ferry login`
// writes ($XDG_CONFIG_HOME/ferry/config.json, else ~/.config/ferry/config.json; mode 0600 in a 0700
// directory, since it holds the key), then the server's default address. The key is kept in a Secret-like
// holder whose printing shows nothing, so a stray log of the settings cannot leak it.
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { CliError, EXIT } from './exit.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export class ApiKey {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toString(): string {
    return '[api key]';
  }
  toJSON(): string {
    return '[api key]';
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[api key]';
  }
}

export interface Settings {
  url: string;
  /** Where the URL came from, for whoami and error messages. */
  urlSource: 'FERRY_URL' | 'config file' | 'default';
  key: ApiKey | undefined;
  keySource: 'FERRY_API_KEY' | 'config file' | undefined;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'ferry', 'config.json');
}

interface ConfigFile {
  url?: string;
  api_key?: string;
}

function readConfigFile(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return {};
    throw err;
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as ConfigFile;
  } catch {
    // Reported below with what to do.
  }
  throw new CliError(`${path} is not a JSON object; run ferry logout and ferry login again`, EXIT.usage);
}

export function loadSettings(env: NodeJS.ProcessEnv = process.env): Settings {
  // With both variables set the file is not read at all, so a broken one cannot stop a script.
  const file = env.FERRY_URL && env.FERRY_API_KEY ? {} : readConfigFile(configPath(env));
  const url = env.FERRY_URL || file.url;
  const key = env.FERRY_API_KEY || file.api_key;
  return {
    url: (url || DEFAULT_URL).replace(/\/+$/, ''),
    urlSource: env.FERRY_URL ? 'FERRY_URL' : file.url ? 'config file' : 'default',
    key: key ? new ApiKey(key) : undefined,
    keySource: env.FERRY_API_KEY ? 'FERRY_API_KEY' : file.api_key ? 'config file' : undefined,
  };
}

/** Writes the file with mode 0600 in a directory of mode 0700, also when either existed before. */
export function saveLogin(url: string, key: ApiKey, env: NodeJS.ProcessEnv = process.env): string {
  const path = configPath(env);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  chmodSync(dirname(path), 0o700);
  writeFileSync(path, `${JSON.stringify({ url, api_key: key.reveal() }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** Removes the file; false when there was none. */
export function removeLogin(env: NodeJS.ProcessEnv = process.env): boolean {
  const path = configPath(env);
  try {
    readFileSync(path);
  } catch {
    return false;
  }
  rmSync(path, { force: true });
  return true;
}
