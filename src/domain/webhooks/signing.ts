// Signing secrets and signatures as the Standard Webhooks specification writes them
// (docs/webhooks.md, "Verifying a delivery"): a secret is "whsec_" and 24 random bytes in base64; the
// signature of an attempt is "v1," and the base64 HMAC-SHA256, keyed with those bytes, of
// "<webhook-id>.<webhook-timestamp>.<body>".
import { createHmac, randomBytes } from 'node:crypto';
import { Secret } from '../../secret.js';

const PREFIX = 'whsec_';

export function newSigningSecret(): Secret {
  return new Secret(`${PREFIX}${randomBytes(24).toString('base64')}`);
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one attempt; `at` is the attempt's time (epoch ms). */
export function signedHeaders(secret: Secret, eventId: string, at: number, body: string): SignedHeaders {
  const key = Buffer.from(secret.reveal().slice(PREFIX.length), 'base64');
  const timestamp = String(Math.floor(at / 1000));
  const mac = createHmac('sha256', key).update(`${eventId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` };
}
