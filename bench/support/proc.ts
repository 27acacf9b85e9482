// What a process uses, from /proc (Linux).
// - Memory, /proc/<pid>/status: VmRSS now, VmHWM the peak ("high water mark"). Writing 5 to
//   /proc/<pid>/clear_refs resets the peak to the current RSS (Linux 4.0+; the same user may do it to
//   its children), so the peak of one phase of a long-lived server can be read.
// - CPU, /proc/<pid>/stat: utime + stime, in clock ticks (USER_HZ, 100 on Linux: 10 ms resolution).
import { readFile, writeFile } from 'node:fs/promises';

export interface Memory {
  rssBytes: number;
  peakBytes: number;
}

export async function memoryOf(pid: number): Promise<Memory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
    return Number(match[1]) * 1024;
  };
  return { rssBytes: kb('VmRSS'), peakBytes: kb('VmHWM') };
}

/** Resets the peak of `pid` to its current RSS. */
export async function resetPeak(pid: number): Promise<void> {
  await writeFile(`/proc/${pid}/clear_refs`, '5');
}

const USER_HZ = 100;

/** CPU seconds (user + system) the process has used so far. */
export async function cpuOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which is in parentheses and may hold spaces: state is field 3,
  // utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
}

/**
 * Samples the peak memory and CPU of a short-lived process until stop(); the results are the last
 * values read (both only grow, so at most the last few milliseconds before the exit are missed).
 */
export function watchProcess(
  pid: number,
  everyMs = 5,
): { stop(): { peakBytes: number; cpuSeconds: number } } {
  let peakBytes = 0;
  let cpuSeconds = 0;
  const timer = setInterval(() => {
    Promise.all([memoryOf(pid), cpuOf(pid)]).then(
      ([m, cpu]) => {
        peakBytes = Math.max(peakBytes, m.peakBytes);
        cpuSeconds = Math.max(cpuSeconds, cpu);
      },
      () => {},
    );
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      return { peakBytes, cpuSeconds };
    },
  };
}

export function mib(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
