// What every client command gets: the parsed global options, the API (settings read on first use, so
// `--help` and usage errors never touch the config file) and the one way to print a result.
import type { Argv } from 'yargs';
import { type Api, createApi } from './http.js';
import { loadSettings, type Settings } from './settings.js';

export interface Globals {
  json?: boolean | undefined;
}

export type Cli = Argv<Globals>;

export interface Context {
  readonly json: boolean;
  settings(): Settings;
  api(): Api;
  /** `--json`: the API's answer as one document; otherwise the human text (if any). */
  print(data: unknown, human: () => string | undefined): void;
  /** A note for people (stderr), never for scripts reading stdout. */
  note(text: string): void;
}

export function contextFor(argv: Globals): Context {
  let settings: Settings | undefined;
  let api: Api | undefined;
  const ctx: Context = {
    json: argv.json === true,
    settings() {
      settings ??= loadSettings();
      return settings;
    },
    api() {
      api ??= createApi(ctx.settings());
      return api;
    },
    print(data, human) {
      if (ctx.json) {
        process.stdout.write(`${JSON.stringify(data ?? null, null, 2)}\n`);
        return;
      }
      const text = human();
      if (text !== undefined && text !== '') process.stdout.write(`${text}\n`);
    },
    note(text) {
      process.stderr.write(`${text}\n`);
    },
  };
  return ctx;
}
