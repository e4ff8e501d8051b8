import crypto from 'node:crypto';
import { inject, injectable } from 'tsyringe';
import type { Knex } from 'knex';
import { AppError, NOT_MIGRATED, SecretBox, SERVICES, toText } from '@switchboard/core';

/**
 * Signs and checks the ids carried by links in mail (confirm, unsubscribe), with the install's secret: kept
 * sealed with the application key (campaign 1.13), opened here.
 */
@injectable()
export class LinkSigner {
  private secret?: Promise<string>;

  constructor(
    @inject(SERVICES.Knex) private readonly knex: Knex,
    @inject(SERVICES.SecretBox) private readonly secrets: SecretBox,
  ) {}

  private key(): Promise<string> {
    this.secret ??= this.knex('campaign_settings')
      .where({ name: 'sealed_link_signing_secret' })
      .first('value')
      .then((row) => {
        // Sealed by campaign 1.13: a process started on a database not migrated that far finds no row.
        if (!row) throw new AppError('SERVICE_UNAVAILABLE', NOT_MIGRATED);
        return this.secrets.open(toText(row.value));
      })
      .catch((err) => {
        // A failed read is not remembered: the next link tries again.
        this.secret = undefined;
        throw err;
      });
    return this.secret;
  }

  async sign(purpose: string, ids: number[]): Promise<string> {
    return (await this.signing())(purpose, ids);
  }

  /** A signing function that needs no await once the secret is read (a mail signs many links). */
  async signing(): Promise<(purpose: string, ids: number[]) => string> {
    const key = await this.key();
    return (purpose, ids) => `${ids.join('.')}.${macOf(key, purpose, ids)}`;
  }

  /** The ids, or null when the token was not signed by this install for this purpose. */
  async verify(purpose: string, token: string): Promise<number[] | null> {
    const parts = token.split('.');
    const mac = parts.pop();
    // One spelling per id as well (no 01, +1, 1e0), so a signed link has exactly one accepted form.
    if (!mac || !parts.length || parts.some((p) => !/^[1-9][0-9]{0,14}$/.test(p))) return null;
    const ids = parts.map(Number);
    const expected = Buffer.from(await this.mac(purpose, ids));
    // The encoded text is compared, not its decoded bytes: base64url decoding ignores the unused low bits
    // of the last character, so several spellings of one signature would pass.
    const given = Buffer.from(mac);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected) ? ids : null;
  }

  /** A key derived from the install's secret for a purpose and ids: the same every time, stored nowhere. */
  async derivedKey(purpose: string, ids: number[]): Promise<Buffer> {
    return crypto
      .createHmac('sha256', await this.key())
      .update(`key.${purpose}.${ids.join('.')}`)
      .digest();
  }

  private async mac(purpose: string, ids: number[]): Promise<string> {
    return macOf(await this.key(), purpose, ids);
  }
}

const macOf = (key: string, purpose: string, ids: number[]) =>
  crypto
    .createHmac('sha256', key)
    .update(`${purpose}.${ids.join('.')}`)
    .digest('base64url');
