import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { dialectOfKnex } from '../src/db/dialect';
import { alterTableOnce, createTableOnce, dropColumnsOnce, hasIndex } from '../src/db/migrations';
import { describeEachBackend } from '../src/testing/services';

/** A change as a killed migration leaves it half made, then made again (test/test/migrations-killed.test.ts runs them all). */
describeEachBackend('schema changes made once (createTableOnce, alterTableOnce, dropColumnsOnce)', (backend) => {
  let knex: Knex;
  before(() => {
    knex = createKnex(backend().databaseUrl);
  });
  after(async () => knex?.destroy());

  const owners = (t: Knex.CreateTableBuilder) => {
    t.increments('id').primary();
    t.string('name', 32).notNullable();
  };
  // A default with a question mark: the statement must go to the database as knex wrote it, not as a template.
  const things = (t: Knex.CreateTableBuilder) => {
    t.increments('id').primary();
    t.integer('owner_id').unsigned().notNullable().references('id').inTable('once_owners').onDelete('CASCADE');
    t.string('label', 32).notNullable().defaultTo('why?');
    t.index(['owner_id', 'label'], 'once_things_owner_idx');
  };

  it('finishes a table that exists without its index and foreign key, and leaves a finished one alone', async () => {
    await createTableOnce(knex, 'once_owners', owners);
    await createTableOnce(knex, 'once_owners', owners);
    // What a run killed after its CREATE TABLE leaves on MySQL: the table without the statements after it.
    const [create] = knex.schema.createTable('once_things', things).toSQL();
    await knex.raw(create.sql);
    await knex('once_owners').insert({ name: 'ada' });
    await knex('once_things').insert({ owner_id: 1 });

    await createTableOnce(knex, 'once_things', things);
    await createTableOnce(knex, 'once_things', things);
    expect(await hasIndex(knex, 'once_things', 'once_things_owner_idx')).to.equal(true);
    expect(await knex('once_things').pluck('label')).to.deep.equal(['why?']);
    // The foreign key holds (on SQLite it came with the CREATE TABLE): deleting the owner takes its things.
    await knex('once_owners').where({ id: 1 }).delete();
    expect(await knex('once_things').count({ n: '*' })).to.deep.equal([{ n: 0 }]);
  });

  it('adds what an alteration still lacks, and drops only what is there', async () => {
    const change = (t: Knex.AlterTableBuilder) => {
      t.string('note', 32).nullable().defaultTo('how?');
      t.index(['note'], 'once_things_note_idx');
    };
    await alterTableOnce(knex, 'once_things', change);
    // Killed between the column and its index.
    await alterTableOnce(knex, 'once_things', (t) => t.dropIndex([], 'once_things_note_idx'));
    expect(await hasIndex(knex, 'once_things', 'once_things_note_idx')).to.equal(false);
    await alterTableOnce(knex, 'once_things', change);
    expect(await hasIndex(knex, 'once_things', 'once_things_note_idx')).to.equal(true);
    await knex('once_owners').insert({ name: 'eve' });
    const [owner] = await knex('once_owners').max({ id: 'id' });
    await knex('once_things').insert({ owner_id: owner.id });
    expect(await knex('once_things').pluck('note')).to.deep.equal(['how?']);
    await knex('once_things').delete();
    await alterTableOnce(knex, 'once_things', (t) => t.dropIndex([], 'once_things_note_idx'));
    await alterTableOnce(knex, 'once_things', (t) => t.dropIndex([], 'once_things_note_idx'));
    if (dialectOfKnex(knex) === 'mysql') {
      // A foreign key dropped twice: MySQL keeps an index under the key's name, which is no foreign key.
      await alterTableOnce(knex, 'once_things', (t) => t.dropForeign(['owner_id']));
      await alterTableOnce(knex, 'once_things', (t) => t.dropForeign(['owner_id']));
      await alterTableOnce(knex, 'once_things', (t) => t.foreign('owner_id').references('id').inTable('once_owners'));
      await alterTableOnce(knex, 'once_things', (t) => t.foreign('owner_id').references('id').inTable('once_owners'));
    }
  });

  it('drops columns once, in place on SQLite: a deleted row’s id is never handed out again', async () => {
    await knex('once_owners').insert([{ name: 'bob' }, { name: 'cy' }]);
    const [last] = await knex('once_owners').max({ id: 'id' });
    await knex('once_owners').where({ id: last.id }).delete();
    await alterTableOnce(knex, 'once_owners', (t) => t.string('old', 8).nullable());

    await dropColumnsOnce(knex, 'once_owners', ['old', 'never_there']);
    await dropColumnsOnce(knex, 'once_owners', ['old']);
    expect(await knex.schema.hasColumn('once_owners', 'old')).to.equal(false);
    const [id] = await knex('once_owners').insert({ name: 'dee' });
    expect(Number(id)).to.be.greaterThan(Number(last.id));
  });
});
