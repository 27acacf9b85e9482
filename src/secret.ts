// A value that must never be printed. JSON.stringify, String(), template literals, util.inspect and
// pino all see "[redacted]"; only reveal() gives the value, and only code that talks to a provider or
// to the cipher should call it.
import { inspect } from 'node:util';

const REDACTED = '[redacted]';

export class Secret<T = string> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toJSON(): string {
    return REDACTED;
  }

  toString(): string {
    return REDACTED;
  }

  [inspect.custom](): string {
    return REDACTED;
  }
}
