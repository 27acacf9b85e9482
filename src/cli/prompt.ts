// Questions on the terminal: a y/N confirmation and a hidden line (an API key, a password). Prompts go
// to stderr so that stdout carries only results.
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';

/** True when stdin is a terminal a person can answer on. */
export const interactive = (): boolean => process.stdin.isTTY === true;

/** Asks `question [y/N] `; only y or yes (any case) is yes. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** A line typed without echo on a terminal; the first line of stdin otherwise (for scripts and pipes). */
export async function secretLine(prompt: string): Promise<string> {
  if (!interactive()) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '').trim();
  }
  process.stderr.write(prompt);
  const muted = new Writable({ write: (_chunk, _enc, done) => done() });
  const rl = createInterface({ input: process.stdin, output: muted, terminal: true });
  try {
    return (await rl.question('')).trim();
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}
