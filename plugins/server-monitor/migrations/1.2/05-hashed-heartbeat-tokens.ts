import crypto from 'node:crypto';
import type { Knex } from 'knex';

/** A SHA-256 digest in hex: 64 characters, the column's size; a token (24 random bytes, base64url) has 32. */
const DIGEST_LENGTH = 64;
const PAGE = 1_000;

/**
 * A heartbeat's ping token is kept as its SHA-256 digest (issue 26, as API tokens are): whoever reads the
 * database cannot ping for a customer's job and so hide that it stopped. Existing tokens are replaced by
 * their digests, so every ping URL handed out before keeps working. Written out here rather than taken
 * from the plugin's code: a migration does what it did when it was written.
 *
 * Down leaves the digests: a digest cannot be turned back into its token. After a rollback below this
 * file, the heartbeats' ping URLs are unknown to that version's code until their heartbeats are made again
 * (docs/operations.md).
 */
export async function up(knex: Knex): Promise<void> {
  for (;;) {
    const rows: Array<{ id: number; token: string }> = await knex('monitor_heartbeats')
      .whereRaw('LENGTH(token) < ?', [DIGEST_LENGTH])
      .orderBy('id')
      .limit(PAGE)
      .select('id', 'token');
    if (!rows.length) return;
    for (const row of rows)
      await knex('monitor_heartbeats')
        .where({ id: row.id })
        .update({ token: crypto.createHash('sha256').update(row.token).digest('hex') });
  }
}

export async function down(): Promise<void> {
  // The digests stay (see above).
}
