import { signedHeaders } from '@switchboard/provider-a/testing';

/** provider_a's (SendGrid's) signed request headers for a JSON body, at a time: what the process tests post. */
export function providerAHeaders(secret: string, body: string, at = new Date()): Record<string, string> {
  return { 'content-type': 'application/json', ...signedHeaders(secret, body, at) };
}
