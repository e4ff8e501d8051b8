import type { Knex } from 'knex';
import type { MigrationContext } from '@switchboard/core';

const MASK = '***';
const PAGE = 1_000;
/** `monitor_servers.endpoint`'s size. */
const MAX_LENGTH = 2048;
/** A query parameter whose value is a credential, by its name's last word (`token`, `api_key`, `apiKey`...). */
const SECRET_WORD =
  /(?:^|[^a-z0-9])(?:token|key|apikey|secret|password|passwd|pwd|pass|auth|sig|signature|credentials?)$/i;
const CAMEL_SECRET = /[a-z0-9](?:Token|Key|Secret|Password|Auth|Signature)$/;

type Secrets = { password?: string; query?: string[] };
type Found = Array<{ part: number; name: string; value: string }>;

const urlOf = (text: string): URL | null => {
  try {
    return new URL(text);
  } catch {
    return null;
  }
};

const nameOf = (raw: string): string => {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
};

/** Each secret query parameter with a value: its place in the raw query and its raw value. */
function secretValues(search: string): Found {
  if (search.length < 2) return [];
  const found: Found = [];
  search
    .slice(1)
    .split('&')
    .forEach((piece, part) => {
      const eq = piece.indexOf('=');
      if (eq <= 0 || eq === piece.length - 1) return;
      const name = nameOf(piece.slice(0, eq));
      if (SECRET_WORD.test(name) || CAMEL_SECRET.test(name))
        found.push({ part, name: piece.slice(0, eq), value: piece.slice(eq + 1) });
    });
  return found;
}

const withValues = (search: string, found: Found, values: string[]): string => {
  const pieces = search.slice(1).split('&');
  found.forEach(({ part, name }, k) => (pieces[part] = `${name}=${values[k]}`));
  return `?${pieces.join('&')}`;
};

/**
 * Secret query values of an endpoint (`?token=`, `?api_key=`...) are kept as its password is since 1.2/04
 * (docs/decisions.md, server-monitor, Endpoint credentials): masked `***` in `endpoint`, sealed in
 * `endpoint_secret`, now as JSON `{"password":..,"query":[..]}` (a password alone stays sealed as it is, as
 * 1.2/04 reads it). The rollback puts the values back into the URLs and the password alone in
 * `endpoint_secret`. The check notes and alerts written of such a server before show the values too: they
 * are masked the same way (the rollback leaves them masked). Written out here rather than taken from the
 * plugin's code: a migration does what it did when it was written.
 */
export async function up(knex: Knex, context: MigrationContext): Promise<void> {
  await pages(
    knex,
    (q) => q.where('endpoint', 'like', '%?%=%'),
    async (trx, row) => {
      const url = urlOf(String(row.endpoint));
      const found = url ? secretValues(url.search) : [];
      if (!url || !found.some((q) => q.value !== MASK)) return;
      // A row 1.2/04 sealed holds its password alone; a row sealed since holds JSON and is masked already.
      // A password sealed under another APP_KEY does not open: the row is left as it is (its checks say so,
      // and giving the endpoint again seals it all).
      const before = row.endpoint_secret === null ? null : openedOrUndefined(context, String(row.endpoint_secret));
      if (before === undefined || before?.startsWith('{')) return;
      const secrets: Secrets = { password: before ?? undefined, query: found.map((q) => q.value) };
      const unmasked = found.filter((q) => q.value !== MASK);
      url.search = withValues(
        url.search,
        unmasked,
        unmasked.map(() => MASK),
      );
      // `***` is longer than a value of one or two characters: an endpoint near the column's size stays.
      if (url.href.length > MAX_LENGTH) return;
      await trx('monitor_servers')
        .where({ id: row.id })
        .update({ endpoint: url.href, endpoint_secret: context.secrets.seal(JSON.stringify(secrets)) });
      // What was written of it before, in its check notes and alerts (whole, as it was entered, or cut at
      // the note's size): each secret `name=value`, and the password, masked where it appears.
      const masks = unmasked.map((q): [string, string] => [`${q.name}=${q.value}`, `${q.name}=${MASK}`]);
      if (before) masks.push([`:${before}@`, `:${MASK}@`]);
      await maskWritten(trx, row.id, masks);
    },
  );
}

/** The text columns that quote a server's endpoint, and their sizes. */
const WRITTEN = [
  { table: 'monitor_logs', column: 'note', size: 1024 },
  { table: 'monitor_alerts', column: 'body', size: Infinity },
];

async function maskWritten(trx: Knex.Transaction, serverId: number, masks: Array<[string, string]>): Promise<void> {
  for (const { table, column, size } of WRITTEN) {
    const rows: Array<{ id: number; text: string | null }> = await trx(table)
      .where({ server_id: serverId })
      .select('id', { text: column });
    for (const { id, text } of rows) {
      if (text === null) continue;
      // `***` is longer than a value of one or two characters: cut to the column's size.
      const masked = masks.reduce((out, [secret, mask]) => out.split(secret).join(mask), text).slice(0, size);
      if (masked !== text)
        await trx(table)
          .where({ id })
          .update({ [column]: masked });
    }
  }
}

const openedOrUndefined = (context: MigrationContext, sealed: string): string | undefined => {
  try {
    return context.secrets.open(sealed);
  } catch {
    return undefined;
  }
};

export async function down(knex: Knex, context: MigrationContext): Promise<void> {
  await pages(
    knex,
    (q) => q.whereNotNull('endpoint_secret'),
    async (trx, row) => {
      const text = context.secrets.open(String(row.endpoint_secret));
      if (!text.startsWith('{')) return;
      const secrets = JSON.parse(text) as Secrets;
      const url = new URL(String(row.endpoint));
      if (secrets.query?.length) url.search = withValues(url.search, secretValues(url.search), secrets.query);
      await trx('monitor_servers')
        .where({ id: row.id })
        .update({
          endpoint: url.href,
          endpoint_secret: secrets.password ? context.secrets.seal(secrets.password) : null,
        });
    },
  );
}

type Row = { id: number; endpoint: unknown; endpoint_secret: unknown };

/** The rows `where` selects, by id, a transaction per page of them. */
async function pages(
  knex: Knex,
  where: (q: Knex.QueryBuilder) => Knex.QueryBuilder,
  each: (trx: Knex.Transaction, row: Row) => Promise<void>,
): Promise<void> {
  for (let after = 0; ;) {
    const rows: Row[] = await where(knex('monitor_servers').where('id', '>', after))
      .orderBy('id')
      .limit(PAGE)
      .select('id', 'endpoint', 'endpoint_secret');
    if (!rows.length) return;
    await knex.transaction(async (trx) => {
      for (const row of rows) await each(trx, row);
    });
    after = Number(rows[rows.length - 1].id);
  }
}
