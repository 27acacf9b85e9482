// The body of POST /v1/verify (docs/api.md, "Verify"), and of a schedule's verify action, which is the
// same body (docs/api.md, "Schedules").
import { type Static, Type } from 'typebox';
import { VERIFY_MODES } from '../states.js';
import { oneOf } from './text.js';
import { Filter, Target } from './transfers.js';

export const VerifyBody = Type.Object(
  {
    from: Target,
    to: Target,
    mode: Type.Optional(
      oneOf(
        VERIFY_MODES,
        'checksum (default): by a hash both sides report, reading the bytes where they report none in common; download: read and hash both sides; size: sizes only',
      ),
    ),
    filter: Type.Optional(Filter),
  },
  { additionalProperties: false, required: ['from', 'to'] },
);
export type VerifyBody = Static<typeof VerifyBody>;
