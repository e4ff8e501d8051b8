import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SIGNED_FIELDS } from './sns-signature';
import { entryOf } from '@switchboard/provider-kit';

export const TEST_CERT_URL = 'https://sns.us-east-1.amazonaws.com/SimpleNotificationService-test.pem';

interface SnsTestSigner {
  certificate: string;
  sign(envelope: Record<string, unknown>, version?: '1' | '2', privateKey?: string): Record<string, unknown>;
}

let shared: SnsTestSigner | undefined;

/**
 * Signs SNS messages as Amazon does, with a key pair and self-signed certificate of its own (made with the
 * openssl command), for tests of provider_d and of hosts that receive it: `certificate` is what a test's
 * certificate source answers for TEST_CERT_URL. One per process, as the adapter keeps a certificate per
 * URL the way Amazon's never changes.
 */
export function snsTestSigner(): SnsTestSigner {
  shared ??= createSigner();
  return shared;
}

function createSigner(): SnsTestSigner {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sns-cert-'));
  let privateKey: string;
  let certificate: string;
  try {
    const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=sns.test'];
    execFileSync('openssl', [...args, '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], {
      stdio: 'ignore',
    });
    privateKey = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
    certificate = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return {
    certificate,
    sign(envelope, version = '2', key = privateKey) {
      const signed: Record<string, unknown> = { ...envelope, SignatureVersion: version, SigningCertURL: TEST_CERT_URL };
      const text = (entryOf(SIGNED_FIELDS, signed.Type) ?? [])
        .filter((name) => typeof signed[name] === 'string')
        .map((name) => `${name}\n${signed[name] as string}\n`)
        .join('');
      const signature = crypto.sign(version === '1' ? 'sha1' : 'sha256', Buffer.from(text), key);
      return { ...signed, Signature: signature.toString('base64') };
    },
  };
}
