import { hmacSha256 } from '@switchboard/provider-kit';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from './signature';

/**
 * The signed headers SendGrid would send with a body at a time, under our contract (HMAC-SHA-256 of the
 * timestamp text then the body, base64): for tests of this adapter and of hosts that receive it.
 */
export function signedHeaders(secret: string, body: string | Buffer, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: hmacSha256(secret, timestamp, body).toString('base64'),
  };
}
