import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { toText, SERVICES } from '@switchboard/core';

/** Signs and checks the ids carried by links in mail (confirm, unsubscribe), with the install's secret. */
@injectable()
export class LinkSigner {
  private secret?: Promise<string>;

  constructor(@inject(SERVICES.Knex) private readonly knex: Knex) {}

  private key(): Promise<string> {
    this.secret ??= this.knex('campaign_settings')
      .where({ name: 'link_signing_secret' })
      .first('value')
      .then((row) => toText(row.value))
      .catch((err) => {
        // A failed read is not remembered: the next link tries again.
        this.secret = undefined;
        throw err;
      });
    return this.secret;
  }

  async sign(purpose: string, ids: number[]): Promise<string> {
    const payload = `${purpose}.${ids.join('.')}`;
    const mac = crypto
      .createHmac('sha256', await this.key())
      .update(payload)
      .digest('base64url');
    return `${ids.join('.')}.${mac}`;
  }

  /** The ids, or null when the token was not signed by this install for this purpose. */
  async verify(purpose: string, token: string): Promise<number[] | null> {
    const parts = token.split('.');
    const mac = parts.pop();
    const ids = parts.map(Number);
    if (!mac || !ids.length || ids.some((n) => !Number.isInteger(n) || n <= 0)) return null;
    const expected = crypto
      .createHmac('sha256', await this.key())
      .update(`${purpose}.${ids.join('.')}`)
      .digest();
    const given = Buffer.from(mac, 'base64url');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? ids : null;
  }
}
