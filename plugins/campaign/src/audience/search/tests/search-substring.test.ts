import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { campaignFixture, CampaignFixture } from '../../../shared/tests/support';

describeEachBackend('campaign: search by substring (name: and plain words)', (backend) => {
  let f: CampaignFixture;
  let club: number;
  const ids: Record<string, number> = {};
  before(async () => {
    f = await campaignFixture(backend());
    club = (await f.api().post('/lists', { name: 'Club', code: 'club' }).expect(201)).body.data.id;
    const people = [
      { email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', meta_data: { plan: 'pro' } },
      { email: 'adam.smith@corp.test', first_name: 'Adam', last_name: 'Smith', lists: [club] },
      { email: 'nray@example.org', first_name: 'Nevada', last_name: 'Ray' },
      { email: 'zed@example.com', first_name: 'Zed', last_name: 'Nptq' },
      { email: 'juergen@example.de', first_name: 'Jürgen', last_name: 'Müller' },
      { email: 'eloise@example.fr', first_name: 'Éloïse', last_name: 'Durand' },
      { email: 'hans@example.de', first_name: 'Hans', last_name: 'Straße' },
      { email: 'solo@example.net', first_name: null, last_name: 'Onlylast' },
    ];
    for (const p of people) {
      const created = await f
        .api()
        .post('/subscribers', { ...p, confirmed: true })
        .expect(201);
      ids[p.first_name ?? p.last_name] = created.body.data.id;
    }
  });
  after(() => f.close());

  const found = async (text: string, extra = '') => {
    const res = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent(text)}${extra}`)
      .expect(200);
    return res.body.data.map((s: { first_name: string | null; last_name: string }) => s.first_name ?? s.last_name);
  };

  it('name: finds a case-insensitive substring of the first name, the last name or "first last"', async () => {
    expect(await found('name:ad')).to.deep.equal(['Ada', 'Adam', 'Nevada']);
    expect(await found('name:ADA')).to.deep.equal(['Ada', 'Adam', 'Nevada']);
    expect(await found('name:"ada lov"')).to.deep.equal(['Ada']);
    expect(await found('name:"a r"')).to.deep.equal(['Nevada']);
    expect(await found('name:lace')).to.deep.equal(['Ada']);
    expect(await found('name:onlyla')).to.deep.equal(['Onlylast']);
    // The email is not the name.
    expect(await found('name:corp')).to.deep.equal([]);
    expect(await found('name:"ada smith"')).to.deep.equal([]);
  });

  it('a plain word finds a substring of the email or the name; several words must all match', async () => {
    expect(await found('ptq')).to.deep.equal(['Zed']);
    expect(await found('corp')).to.deep.equal(['Adam']);
    expect(await found('m.smi')).to.deep.equal(['Adam']);
    expect(await found('ray example')).to.deep.equal(['Nevada']);
    expect(await found('example.de')).to.deep.equal(['Jürgen', 'Hans']);
    expect(await found('ray corp')).to.deep.equal([]);
    expect(await found('EXAMPLE.COM ada')).to.deep.equal(['Ada']);
  });

  it('folds case and accents: müll, ÉLO and muller find their names; ß is ss', async () => {
    expect(await found('name:müll')).to.deep.equal(['Jürgen']);
    expect(await found('name:muller')).to.deep.equal(['Jürgen']);
    expect(await found('name:ÉLO')).to.deep.equal(['Éloïse']);
    expect(await found('name:eloise')).to.deep.equal(['Éloïse']);
    expect(await found('name:strasse')).to.deep.equal(['Hans']);
    expect(await found('STRASSE')).to.deep.equal(['Hans']);
    expect(await found('name:jürgen')).to.deep.equal(['Jürgen']);
  });

  it('answers terms of one and two characters from the index too', async () => {
    expect(await found('name:y')).to.deep.equal(['Nevada', 'Onlylast']);
    expect(await found('q')).to.deep.equal(['Zed']);
    expect(await found('name:ß')).to.deep.equal(['Hans']);
    expect(await found('name:ss')).to.deep.equal(['Hans']);
    expect(await found('name:ï')).to.deep.equal(['Adam', 'Éloïse']);
  });

  it('keeps word* prefixes, email: exact, and combines substrings with list:, meta. and status:', async () => {
    expect(await found('name:lov*')).to.deep.equal(['Ada']);
    expect(await found('name:"ada lov*"')).to.deep.equal(['Ada']);
    expect(await found('smi* corp')).to.deep.equal(['Adam']);
    expect(await found('email:ada')).to.deep.equal([]);
    expect(await found('name:ada list:club')).to.deep.equal(['Adam']);
    expect(await found('ada meta.plan:pro')).to.deep.equal(['Ada']);
    expect(await found('name:ada status:unsubscribed')).to.deep.equal([]);
  });

  it('combines a substring with list: and list_id through every way a membership comes and goes', async () => {
    const api = f.api();
    const band = (await api.post('/lists', { name: 'Band', code: 'band' }).expect(201)).body.data.id;
    const inBand = async (text: string) => ({
      byCode: await found(`${text} list:band`),
      byId: await found(text, `&list_id=${band}`),
    });
    const both = (names: string[]) => ({ byCode: names, byId: names });
    expect(await inBand('name:a')).to.deep.equal(both([]));

    // Joined by POST /lists/{id}/subscribers, left by DELETE: the index keeps the old membership.
    await api.post(`/lists/${band}/subscribers`, { subscriber_ids: [ids.Ada, ids.Nevada] }).expect(200);
    expect(await inBand('name:ada')).to.deep.equal(both(['Ada', 'Nevada']));
    await api.delete(`/lists/${band}/subscribers`, { subscriber_ids: [ids.Ada] }).expect(200);
    expect(await inBand('name:ada')).to.deep.equal(both(['Nevada']));
    expect(await found('name:ada list:band', `&list_id=${club}`)).to.deep.equal([]);

    // Replaced by PUT /subscribers/{id} lists, joined again, and given at creation and by a batch.
    await api.put(`/subscribers/${ids.Nevada}`, { lists: [club] }).expect(200);
    expect(await inBand('name:ada')).to.deep.equal(both([]));
    expect(await found('name:ada list:club')).to.deep.equal(['Adam', 'Nevada']);
    await api.put(`/subscribers/${ids.Nevada}`, { lists: [club, band] }).expect(200);
    expect(await inBand('ray')).to.deep.equal(both(['Nevada']));
    await api
      .post('/subscribers', { email: 'ada.b@band.test', first_name: 'Adaline', lists: [band], confirmed: true })
      .expect(201);
    await api
      .post('/subscribers/batch', {
        subscribers: [
          { email: 'ada.c@band.test', first_name: 'Adair' },
          { email: 'ada.d@solo.test', first_name: 'Adaire' },
        ],
        lists: [band],
        skip_confirmation: true,
      })
      .expect(200);
    expect(await inBand('name:ada')).to.deep.equal(both(['Nevada', 'Adaline', 'Adair', 'Adaire']));
    expect(await inBand('name:ada band.test')).to.deep.equal(both(['Adaline', 'Adair']));

    // A deleted list finds nobody, even through the index's sets that still name it.
    await api.delete(`/lists/${band}`).expect(200);
    expect(await found('name:ada list:band')).to.deep.equal([]);
  });

  it('follows renames, status changes and deletions', async () => {
    await f.api().put(`/subscribers/${ids.Zed}`, { last_name: 'Other' }).expect(200);
    expect(await found('ptq')).to.deep.equal([]);
    expect(await found('name:"zed oth"')).to.deep.equal(['Zed']);

    await f.api().post(`/subscribers/${ids.Adam}/unsubscribe`).expect(200);
    expect(await found('smith')).to.deep.equal([]);
    expect(await found('smith status:unsubscribed')).to.deep.equal(['Adam']);
    expect(await found('name:ada', '&status=unsubscribed')).to.deep.equal(['Adam']);

    await f.api().delete(`/subscribers/${ids['Éloïse']}`).expect(200);
    expect(await found('name:elo')).to.deep.equal([]);
  });

  it('pages through matches in id order with an exact total', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({ email: `quill${i}@page.test`, first_name: `Pat${i}` }));
    await f.api().post('/subscribers/batch', { subscribers: rows, skip_confirmation: true }).expect(200);
    const res = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent('quill')}&per_page=10&page=2`)
      .expect(200);
    expect(res.body.data.map((s: { first_name: string }) => s.first_name)).to.deep.equal(
      Array.from({ length: 10 }, (_, i) => `Pat${i + 10}`),
    );
    expect(res.body.pagination.total).to.equal(30);
    expect(res.body.pagination.total_capped).to.equal(undefined);
    const empty = await f
      .api()
      .get(`/subscribers?search=${encodeURIComponent('quill')}&per_page=10&page=4`)
      .expect(200);
    expect(empty.body.data).to.deep.equal([]);
    expect(empty.body.pagination.total).to.equal(30);
  });
});

describeEachBackend('campaign: substring search totals and filters at a few thousand matches', (backend) => {
  let f: CampaignFixture;
  before(async () => {
    f = await campaignFixture(backend());
    for (let start = 0; start < 6000; start += 1000) {
      const rows = Array.from({ length: 1000 }, (_, i) => ({
        email: `c${start + i}@cap.test`,
        first_name: 'Capper',
        meta_data: { half: (start + i) % 2 ? 'odd' : 'even' },
      }));
      await f.api().post('/subscribers/batch', { subscribers: rows, skip_confirmation: true }).expect(200);
    }
  });
  after(() => f.close());

  const page = async (text: string, extra = '') =>
    (
      await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent(text)}${extra}`)
        .expect(200)
    ).body;

  it('counts substring matches exactly up to 1,000, then says the total is capped', async () => {
    const all = await page('name:capper', '&per_page=100&page=10');
    expect(all.pagination).to.include({ total: 1000, total_capped: true, last_page: 10, next_page_url: null });
    expect(all.data.map((s: { email: string }) => s.email)).to.deep.equal(
      Array.from({ length: 100 }, (_, i) => `c${900 + i}@cap.test`),
    );
    // The last page of a capped total shows a whole page, past the 1000th match when it straddles it.
    const straddling = await page('name:capper', '&per_page=30&page=34');
    expect(straddling.data.map((s: { email: string }) => s.email)).to.deep.equal(
      Array.from({ length: 30 }, (_, i) => `c${990 + i}@cap.test`),
    );
    const few = await page('c59 cap.test');
    expect(few.pagination.total).to.equal(111);
    expect(few.pagination.total_capped).to.equal(undefined);
    // Past an exact total a page is empty, as any list's.
    const afterFew = await page('c59 cap.test', '&per_page=100&page=5');
    expect(afterFew.data).to.deep.equal([]);
    expect(afterFew.pagination).to.include({ total: 111, last_page: 2 });
  });

  it('refuses a page past the matches a capped total counts with a 422 naming page', async () => {
    for (const extra of ['&per_page=100&page=11', '&per_page=100&page=500', '&per_page=30&page=35', '&page=51']) {
      const res = await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('name:capper')}${extra}`)
        .expect(422);
      expect(res.body.success, extra).to.equal(false);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details).to.deep.equal({ field: 'page', rule: 'maximum' });
      expect(res.body.error.message).to.match(
        /only through the 1000 matches its capped total counts \(at most page \d+ at per_page/,
      );
    }
  });

  it('refuses with a 422 too_broad a search whose SUBSTRING_CONFIRM_CAP candidates hold no match of its page', async () => {
    // "ap" is in every name (Capper) and every address (cap.test), but starts no word.
    for (const extra of ['', '&page=2']) {
      const res = await f
        .api()
        .get(`/subscribers?search=${encodeURIComponent('ap*')}${extra}`)
        .expect(422);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details).to.deep.equal({ field: 'search', rule: 'too_broad' });
      expect(res.body.error.message).to.match(
        /^Search too broad: .* held no match for page \d\. Add a longer or rarer term, a list: or a meta\. filter/,
      );
    }
  });

  /** The SQL of the reads of `table` a request runs, but for the span of ids (min and max) each filter is read for first. */
  const reads = async (table: string, run: () => Promise<unknown>) => {
    const seen: string[] = [];
    const listen = (q: { sql: string }) =>
      void (q.sql.includes(table) && !/select min\(/i.test(q.sql) && seen.push(q.sql));
    f.engine.knex.on('query', listen);
    try {
      await run();
    } finally {
      f.engine.knex.removeListener('query', listen);
    }
    return seen;
  };

  it('narrows by a filter read as an id range when the candidates are many (and by lookups when few)', async () => {
    let odd: { data: Array<{ email: string }>; pagination: { total: number } } | undefined;
    const ranged = await reads(
      'subscriber_meta',
      async () => (odd = await page('name:capper meta.half:odd', '&per_page=5&page=3')),
    );
    expect(ranged.length).to.be.greaterThan(0);
    expect(ranged.every((sql) => /subscriber_id[`"]? >= /.test(sql))).to.equal(true);
    odd = odd!;
    expect(odd.data.map((s: { email: string }) => s.email)).to.deep.equal(
      [21, 23, 25, 27, 29].map((n) => `c${n}@cap.test`),
    );
    expect(odd.pagination.total).to.equal(1000);
    let rare: { data: Array<{ email: string }>; pagination: { total: number } } | undefined;
    const looked = await reads('subscriber_meta', async () => (rare = await page('c4321 meta.half:odd')));
    expect(looked.length).to.be.greaterThan(0);
    expect(looked.every((sql) => /subscriber_id[`"]? in \(/.test(sql))).to.equal(true);
    rare = rare!;
    expect(rare.data.map((s: { email: string }) => s.email)).to.deep.equal(['c4321@cap.test']);
    expect(rare.pagination.total).to.equal(1);
    expect((await page('c4320 meta.half:odd')).pagination.total).to.equal(0);
  });

  it('reads no index rows when a filter allows no id at all (a meta value nobody has)', async () => {
    let none: { data: unknown[]; pagination: { total: number; total_capped?: boolean } } | undefined;
    const gramReads = await reads('subscriber_grams', async () => (none = await page('name:capper c1 meta.half:none')));
    expect(gramReads).to.deep.equal([]);
    expect(none!.data).to.deep.equal([]);
    expect(none!.pagination.total).to.equal(0);
    expect(none!.pagination.total_capped).to.equal(undefined);
  });
});
