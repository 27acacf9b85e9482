// What the event stream has told this tab: the latest state of each job, transfer and send, with the
// samples a rate and a remaining time are worked out from.
import type { AnySend, Job, Transfer } from '../../src/api/routes.js';
import type { StreamEvent } from './api.js';

interface Sample {
  at: number;
  bytes: number;
  objects: number;
}

/** Bytes and objects per second over the last samples (up to ~10 s). */
export interface Rate {
  bytesPerSecond: number;
  objectsPerSecond: number;
}

export class Live {
  readonly jobs = new Map<string, Job>();
  readonly transfers = new Map<string, Transfer>();
  /** Each send as the event stream or an answer of /v1/sends shows it. */
  readonly sends = new Map<string, AnySend>();
  readonly #samples = new Map<string, Sample[]>();

  apply(e: StreamEvent, now: number): void {
    if (e.event === 'job') {
      const job = e.data as unknown as Job;
      this.jobs.set(job.job_id, job);
      const c = job.counts;
      this.#sample(job.job_id, now, job.bytes_done, c.succeeded + c.skipped + c.failed + (c.deleted ?? 0));
    } else if (e.event === 'transfer') {
      const t = e.data as unknown as Transfer;
      this.transfers.set(t.id, t);
      this.#sample(t.id, now, t.bytes_done, 0);
    } else {
      const s = e.data as unknown as AnySend;
      this.sends.set(s.id, s);
    }
  }

  #sample(id: string, at: number, bytes: number, objects: number): void {
    const list = (this.#samples.get(id) ?? []).filter((s) => at - s.at < 10_000);
    list.push({ at, bytes, objects });
    this.#samples.set(id, list);
  }

  rate(id: string): Rate | undefined {
    const list = this.#samples.get(id);
    const first = list?.[0];
    const last = list?.at(-1);
    if (!first || !last || last.at - first.at < 500) return undefined;
    const seconds = (last.at - first.at) / 1000;
    return {
      bytesPerSecond: (last.bytes - first.bytes) / seconds,
      objectsPerSecond: (last.objects - first.objects) / seconds,
    };
  }
}
