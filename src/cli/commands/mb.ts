// `ferry mb <location>/<bucket>`: make a bucket (a container on azureblob) on a bucket store
// (POST /v1/buckets, docs/api.md "Buckets"). Named after rclone's and the AWS CLI's `mb`.
import { type Cli, contextFor } from '../context.js';
import { usageError } from '../exit.js';
import { time } from '../format.js';
import { locationRef, parsePlace } from '../targets.js';

export function mbCommand(cli: Cli): Cli {
  return cli.command(
    'mb <place>',
    'make a bucket (a container on azureblob) at a bucket store: location/bucket or location:bucket',
    (y) =>
      y
        .positional('place', { type: 'string', demandOption: true, describe: 'location/bucket' })
        .example('$0 mb archive/backup-2026', 'a new bucket backup-2026 on the location archive'),
    async (argv) => {
      const { location, path } = parsePlace(argv.place);
      const bucket = path.replace(/\/+$/, '');
      if (bucket === '' || bucket.includes('/')) {
        throw usageError(`name one bucket after the location: location/bucket (got "${argv.place}")`);
      }
      const ctx = contextFor(argv);
      const made = await ctx
        .api()
        .send('POST', '/v1/buckets', { body: { ...locationRef(location), bucket } });
      ctx.print(made, () => `made ${location}/${made.name}${made.modTime ? ` (${time(made.modTime)})` : ''}`);
    },
  );
}
