import { expect } from 'chai';
import type { Knex } from 'knex';
import { createKnex } from '../src/db/knex';
import { addByKey, setWhereIn, updateText } from '../src/db/update-text';
import { describeEachBackend } from '../src/testing/services';

describeEachBackend('UPDATE text pieces (setWhereIn, addByKey, updateText)', (backend) => {
  let knex: Knex;
  before(async () => {
    knex = createKnex(backend().databaseUrl);
    await knex.schema.createTable('ut_counts', (t) => {
      t.integer('id').primary();
      t.integer('n').notNullable().defaultTo(0);
      t.string('day', 10).nullable();
    });
  });
  after(async () => {
    await knex.schema.dropTableIfExists('ut_counts');
    await knex.destroy();
  });

  const rows = async () =>
    (await knex('ut_counts').orderBy('id').select()).map((r) => [Number(r.id), Number(r.n), r.day ?? null]);
  const where = (ids: number[]) => ({ sql: `\`id\` in (${ids.map(() => '?').join(', ')})`, values: ids });

  it('adds each row its own amount and sets a column on some rows only, answering the rows matched', async () => {
    await knex('ut_counts').insert([1, 2, 3, 4].map((id) => ({ id, n: 10, day: null })));
    const amounts = new Map([
      [1, 1],
      [2, 5],
      [3, 1],
    ]);
    const matched = await updateText(
      knex,
      'ut_counts',
      [addByKey('id', 'n', amounts, 3), setWhereIn({ key: 'id', ids: [2], of: 3 }, 'day', '2026-11-27')],
      where([1, 2, 3]),
    );
    expect(matched).to.equal(3);
    expect(await rows()).to.deep.equal([
      [1, 11, null],
      [2, 15, '2026-11-27'],
      [3, 11, null],
      [4, 10, null],
    ]);
  });

  it('writes one amount and one value for every row named without a CASE, and leaves rows not named', async () => {
    const sets = [
      addByKey(
        'id',
        'n',
        new Map([
          [1, 2],
          [4, 2],
        ]),
        2,
      ),
      setWhereIn({ key: 'id', ids: [1, 4], of: 2 }, 'day', 'x'),
    ];
    expect(sets.map((set) => set.sql)).to.deep.equal(['`n` = `n` + ?', '`day` = ?']);
    // A row named among fewer than `of` gets a CASE: here the amounts name 1 of the 2 rows updated.
    expect(addByKey('id', 'n', new Map([[1, 2]]), 2).sql).to.match(/case when `id` in \(\?\) then \? else 0 end/);
    expect(await updateText(knex, 'ut_counts', sets, where([1, 4]))).to.equal(2);
    expect(await rows()).to.deep.equal([
      [1, 13, 'x'],
      [2, 15, '2026-11-27'],
      [3, 11, null],
      [4, 12, 'x'],
    ]);
  });
});
