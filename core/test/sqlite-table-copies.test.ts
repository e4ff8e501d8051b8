import fs from 'node:fs';
import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { withoutSqliteForeignKeys } from '../src/db/sqlite-table-copies';
import { embeddedBackend } from '../src/testing/services';

describe('SQLite table copies (withoutSqliteForeignKeys)', () => {
  const backend = embeddedBackend();
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend.databaseUrl);
    await knex.schema.createTable('copy_people', (t) => {
      t.increments('id').primary();
      t.string('name', 32).notNullable();
      t.string('old', 32).nullable();
    });
    await knex.schema.createTable('copy_notes', (t) => {
      t.increments('id').primary();
      t.integer('person_id').unsigned().notNullable().references('id').inTable('copy_people').onDelete('CASCADE');
    });
  });
  after(async () => {
    await knex.destroy();
    fs.rmSync(backend.databaseUrl.slice('sqlite:'.length), { force: true });
  });

  it('drops a column keeping the rows that reference the table, and never hands out a deleted row’s id again', async () => {
    await knex('copy_people').insert([{ name: 'ada' }, { name: 'bob' }, { name: 'cy' }]);
    await knex('copy_notes').insert([{ person_id: 1 }, { person_id: 2 }]);
    // The highest id is gone: a plain copy of the table would start its sequence again at 2.
    await knex('copy_people').where({ id: 3 }).delete();

    await withoutSqliteForeignKeys(knex, () => knex.schema.alterTable('copy_people', (t) => t.dropColumn('old')));

    expect(await knex.schema.hasColumn('copy_people', 'old')).to.equal(false);
    expect((await knex('copy_notes').orderBy('id').pluck('person_id')).map(Number)).to.deep.equal([1, 2]);
    const [id] = await knex('copy_people').insert({ name: 'dee' });
    expect(Number(id)).to.equal(4);
    // Foreign keys are on again: a note of nobody is refused.
    const refused = await knex('copy_notes')
      .insert({ person_id: 99 })
      .then(
        () => 'written',
        (err: Error) => err.message,
      );
    expect(refused).to.match(/FOREIGN KEY/i);
  });
});
