import type { Knex } from 'knex';
import {
  alterTableOnce,
  createTableOnce,
  dialectOfKnex,
  dropColumnsOnce,
  withoutSqliteForeignKeys,
} from '@switchboard/core';

const COLUMNS = ['messages_opened', 'messages_clicked', 'last_engaged_day'] as const;

/**
 * A subscriber's first-open and first-click counters and latest engagement day move out of the wide
 * `subscribers` row into a narrow row of their own, written by every recorded first open or click
 * (docs/decisions.md, Subscriber engagement). A subscriber has a row once it engaged (or, from the upgrade,
 * had counters or a day). No foreign key: the check would read and lock the subscriber's wide row, which
 * the mails read has locked already; deleting a subscriber deletes its row.
 */
export async function up(knex: Knex): Promise<void> {
  await createSubscriberEngagement(knex);
  // Each step looks before it acts: a run stopped half way (a lock wait, a killed process) runs again.
  const left = await columnsOfSubscribers(knex);
  if (left.length === COLUMNS.length) {
    const ignore = dialectOfKnex(knex) === 'mysql' ? 'insert ignore' : 'insert or ignore';
    await knex.raw(
      `${ignore} into \`subscriber_engagement\` (\`subscriber_id\`, ${COLUMNS.map((c) => `\`${c}\``).join(', ')}) ` +
        `select \`id\`, ${COLUMNS.map((c) => `\`${c}\``).join(', ')} from \`subscribers\` ` +
        'where `messages_opened` > 0 or `messages_clicked` > 0 or `last_engaged_day` is not null',
    );
  }
  await dropColumnsOnce(knex, 'subscribers', left);
}

/** Which of the moved columns `subscribers` still has. */
async function columnsOfSubscribers(knex: Knex): Promise<string[]> {
  const left: string[] = [];
  for (const column of COLUMNS) if (await knex.schema.hasColumn('subscribers', column)) left.push(column);
  return left;
}

/**
 * Not in one transaction (as it always ran; its steps look before they act): SQLite drops the columns in place
 * (core dropColumnsOnce; until session 32 by copying `subscribers`, whose id sequence a kill could lose).
 */
export const config = { transaction: false };

export async function down(knex: Knex): Promise<void> {
  const left = await columnsOfSubscribers(knex);
  const missing = COLUMNS.filter((column) => !left.includes(column));
  if (missing.length)
    await withoutSqliteForeignKeys(knex, () =>
      alterTableOnce(knex, 'subscribers', (t) => {
        if (missing.includes('messages_opened')) t.integer('messages_opened').unsigned().notNullable().defaultTo(0);
        if (missing.includes('messages_clicked')) t.integer('messages_clicked').unsigned().notNullable().defaultTo(0);
        if (missing.includes('last_engaged_day')) t.string('last_engaged_day', 10).nullable();
      }),
    );
  if (await knex.schema.hasTable('subscriber_engagement')) {
    const from = COLUMNS.map((c) => `\`${c}\` = \`e\`.\`${c}\``);
    await knex.raw(
      dialectOfKnex(knex) === 'mysql'
        ? 'update `subscribers` as `s` inner join `subscriber_engagement` as `e` on `e`.`subscriber_id` = `s`.`id` ' +
            `set ${from.map((set) => `\`s\`.${set}`).join(', ')}`
        : `update \`subscribers\` set ${from.join(', ')} from \`subscriber_engagement\` as \`e\` ` +
            'where `e`.`subscriber_id` = `subscribers`.`id`',
    );
  }
  await knex.schema.dropTableIfExists('subscriber_engagement');
}

/** The table alone (upgrade tests give it to a schema of an older version, which today's code writes). */
export async function createSubscriberEngagement(knex: Knex): Promise<void> {
  await createTableOnce(knex, 'subscriber_engagement', (t) => {
    t.integer('subscriber_id').unsigned().primary();
    t.integer('messages_opened').unsigned().notNullable().defaultTo(0);
    t.integer('messages_clicked').unsigned().notNullable().defaultTo(0);
    // YYYY-MM-DD, a UTC day (as analytics_daily's days); null for counters from before 1.10.
    t.string('last_engaged_day', 10).nullable();
  });
}
