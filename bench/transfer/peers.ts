// The peers ferry is compared with (Debian's packages): `rclone copy` and `aws s3 cp --recursive`
// (awscli v2), both configured without touching the user's files (docs/testing.md):
// - rclone by environment only (RCLONE_CONFIG=/dev/null): remote S3 is s3rver (provider Other,
//   path-style), remote AZ is azurite (use_emulator and the full endpoint). AWS_CA_BUNDLE is unset, it
//   breaks rclone's S3 backend.
// - aws through a config file of ours: 16 requests at a time, path-style, multipart_threshold 64MB
//   (s3rver has no UploadPartCopy, and no object of items (a) and (b) is that large anyway).
// Each run reports its wall time, and the peak RSS and CPU of the tool's process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AZURITE_ACCOUNT, AZURITE_KEY } from '../../test/support/azurite.js';
import { watchProcess } from '../support/proc.js';

export const CONCURRENCY = 16;

export interface ToolRun {
  seconds: number;
  peakBytes: number;
  cpuSeconds: number;
  /** ferry only: the server's RSS when the run began (its peak is reset to it). */
  rssBeforeBytes?: number;
}

export interface Endpoints {
  s3: string;
  azure: string;
}

async function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<ToolRun> {
  const started = performance.now();
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const watch = watchProcess(child.pid as number, 20);
  const output: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => output.push(b));
  child.stderr.on('data', (b: Buffer) => output.push(b));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  const seconds = (performance.now() - started) / 1000;
  const { peakBytes, cpuSeconds } = watch.stop();
  if (code !== 0)
    throw new Error(`${command} ${args.join(' ')} exited ${code}:\n${Buffer.concat(output).toString()}`);
  return { seconds, peakBytes, cpuSeconds };
}

export class Rclone {
  readonly #env: NodeJS.ProcessEnv;

  constructor(
    endpoints: Endpoints,
    readonly binary = '/usr/bin/rclone',
  ) {
    const { AWS_CA_BUNDLE: _bundle, ...inherited } = process.env;
    this.#env = {
      ...inherited,
      RCLONE_CONFIG: '/dev/null',
      RCLONE_CONFIG_S3_TYPE: 's3',
      RCLONE_CONFIG_S3_PROVIDER: 'Other',
      RCLONE_CONFIG_S3_ENDPOINT: endpoints.s3,
      RCLONE_CONFIG_S3_FORCE_PATH_STYLE: 'true',
      RCLONE_CONFIG_S3_ACCESS_KEY_ID: 'bench',
      RCLONE_CONFIG_S3_SECRET_ACCESS_KEY: 'bench',
      RCLONE_CONFIG_AZ_TYPE: 'azureblob',
      RCLONE_CONFIG_AZ_ACCOUNT: AZURITE_ACCOUNT,
      RCLONE_CONFIG_AZ_KEY: AZURITE_KEY,
      RCLONE_CONFIG_AZ_ENDPOINT: endpoints.azure,
      RCLONE_CONFIG_AZ_USE_EMULATOR: 'true',
    };
  }

  /**
   * `rclone copy FROM TO --transfers 16 --checkers 16 --server-side-across-configs`, e.g. FROM
   * "S3:source" and TO "S3:dest" (one remote: server-side CopyObject) or "AZ:container" (streamed).
   */
  /** rclone with these arguments, in this environment. */
  run(args: string[]): Promise<ToolRun> {
    return run(this.binary, args, this.#env);
  }

  copy(from: string, to: string): Promise<ToolRun> {
    return run(
      this.binary,
      [
        'copy',
        from,
        to,
        '--transfers',
        String(CONCURRENCY),
        '--checkers',
        String(CONCURRENCY),
        '--server-side-across-configs',
        '--stats',
        '0',
        '-q',
      ],
      this.#env,
    );
  }
}

/**
 * rclone's sync flags beside the shared ones: `default` compares size and modification time (on S3 the
 * time rclone keeps in the object's metadata, which the listing lacks: a HEAD per object).
 */
export type RcloneSyncMode = 'default' | 'server-modtime' | 'checksum' | 'size-only';

export interface RcloneSync {
  sync(from: string, to: string, mode: RcloneSyncMode): Promise<ToolRun>;
}

/**
 * `rclone sync FROM TO --transfers 16 --checkers 16 --fast-list --server-side-across-configs` plus the
 * mode's flag (bench/sync). --fast-list lists a prefix in one recursive pass, as ferry does.
 */
export function rcloneSync(rclone: Rclone): RcloneSync {
  return {
    sync: (from, to, mode) =>
      rclone.run([
        'sync',
        from,
        to,
        '--transfers',
        String(CONCURRENCY),
        '--checkers',
        String(CONCURRENCY),
        '--fast-list',
        '--server-side-across-configs',
        ...{
          default: [],
          // Skips what is newer at the destination by the store's own time, read from the listing.
          'server-modtime': ['--update', '--use-server-modtime'],
          checksum: ['--checksum'],
          'size-only': ['--size-only'],
        }[mode],
        '--stats',
        '0',
        '-q',
      ]),
  };
}

export class Aws {
  readonly #env: NodeJS.ProcessEnv;
  readonly #dir: string;

  constructor(
    private readonly endpoint: string,
    readonly binary = '/usr/bin/aws',
  ) {
    this.#dir = mkdtempSync(join(tmpdir(), 'ferry-bench-aws-'));
    const config = join(this.#dir, 'config');
    writeFileSync(
      config,
      [
        '[default]',
        'region = us-east-1',
        's3 =',
        `  max_concurrent_requests = ${CONCURRENCY}`,
        '  multipart_threshold = 64MB',
        '  addressing_style = path',
        '',
      ].join('\n'),
    );
    const { AWS_CA_BUNDLE: _bundle, AWS_PROFILE: _profile, ...inherited } = process.env;
    this.#env = {
      ...inherited,
      AWS_CONFIG_FILE: config,
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      AWS_PAGER: '',
    };
  }

  /** `aws s3 cp --recursive s3://FROM/ s3://TO/` (server-side CopyObject for each object). */
  copyRecursive(fromBucket: string, toBucket: string): Promise<ToolRun> {
    return run(
      this.binary,
      [
        '--endpoint-url',
        this.endpoint,
        's3',
        'cp',
        '--recursive',
        '--only-show-errors',
        '--no-progress',
        `s3://${fromBucket}/`,
        `s3://${toBucket}/`,
      ],
      this.#env,
    );
  }

  close(): void {
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

/** The bare SDK loop (bench/transfer/sdk-loop.mjs), in a node process of its own. */
export class SdkLoop {
  readonly #env: NodeJS.ProcessEnv;
  readonly #script = new URL('./sdk-loop.mjs', import.meta.url).pathname;

  constructor(endpoints: Endpoints) {
    this.#env = {
      ...process.env,
      S3_ENDPOINT: endpoints.s3,
      AZURE_ENDPOINT: endpoints.azure,
      AZURE_ACCOUNT: AZURITE_ACCOUNT,
      AZURE_KEY: AZURITE_KEY,
    };
  }

  s3Copy(sourceBucket: string, destBucket: string): Promise<ToolRun> {
    return run(process.execPath, [this.#script, 's3-copy', sourceBucket, destBucket], this.#env);
  }

  s3ToAzure(sourceBucket: string, container: string): Promise<ToolRun> {
    return run(process.execPath, [this.#script, 's3-to-azure', sourceBucket, container], this.#env);
  }
}
