import net from 'node:net';
import tls from 'node:tls';
import { guardedLookup } from '@switchboard/core';
import type { MonitorAddresses } from '../shared/addresses';

export interface CertificateFacts {
  validTo: Date;
  issuer: string;
  subject: string;
}

const nameOf = (entity: tls.Certificate | undefined) =>
  String(entity?.CN ?? entity?.O ?? '')
    .slice(0, 255)
    .trim();

/**
 * The certificate an https endpoint presents, read with node:tls without judging it: self-signed and
 * expired certificates are what this check is for. The address connected to is checked first, as a
 * check's is (MonitorAddresses): a refused one fails with code ERR_MONITOR_ADDRESS_REFUSED, unconnected.
 */
export function readCertificate(
  endpoint: string,
  timeoutMs: number,
  addresses: MonitorAddresses,
): Promise<CertificateFacts> {
  const url = new URL(endpoint);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refusal = addresses.refusal();
  // Node calls `lookup` for names only.
  const refused = net.isIP(host) ? refusal(host) : null;
  if (refused) return Promise.reject(refused);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      lookup: guardedLookup(refusal),
      ...(net.isIP(host) ? {} : { servername: host }),
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    const fail = (err: Error) => {
      socket.destroy();
      reject(err);
    };
    socket.once('timeout', () => fail(new Error(`no TLS answer within ${timeoutMs} ms`)));
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      if (!cert || !cert.valid_to) return reject(new Error('no certificate presented'));
      const validTo = new Date(cert.valid_to);
      // A date no clock reads fails this server's check alone, as one not presented does.
      if (Number.isNaN(validTo.getTime())) return reject(new Error(`an expiry that is no date: ${cert.valid_to}`));
      resolve({ validTo, issuer: nameOf(cert.issuer), subject: nameOf(cert.subject) });
    });
  });
}
