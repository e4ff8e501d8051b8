import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { ImportFileError, ServerImporter } from '../importer';
import { monitorFixture, MonitorFixture, rowCount } from '../../shared/tests/support';

describeEachBackend('server-monitor: CSV files as people write them', (backend) => {
  let f: MonitorFixture;
  let dir: string;
  before(async () => {
    f = await monitorFixture(backend());
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'monitor-csv-'));
  });
  after(async () => {
    await f?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const importer = () => f.engine.contexts.get('server-monitor')!.container.resolve(ServerImporter);
  const file = (name: string, text: string) => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, text);
    return at;
  };
  const serversOf = (name: string) =>
    f.engine
      .knex('monitor_servers as s')
      .join('organizations as o', 'o.id', 's.organization_id')
      .where('o.name', name)
      .orderBy('s.id')
      .pluck('s.title');

  it("takes a spreadsheet's export: BOM, CRLF, a quote inside a field not quoted, trailing rows of commas", async () => {
    const csv = file(
      'spreadsheet.csv',
      '\uFEFF"title","endpoint","organization_name"\r\n' +
        'Big "blue" box,https://blue.test/,Sheet Co\r\n' +
        '"Quoted, with comma",https://comma.test/,Sheet Co\r\n' +
        ',,\r\n' +
        ' , , \r\n',
    );
    expect(await importer().import(csv)).to.deep.include({ imported: 2, errors: 0, error_rows: [] });
    expect(await serversOf('Sheet Co')).to.deep.equal(['Big "blue" box', 'Quoted, with comma']);
  });

  it('writes nothing from a file that stops being CSV part way, naming the line', async () => {
    const rows = Array.from({ length: 4_500 }, (_, i) => `Shop ${i},https://shop-${i}.test/,Half Co`);
    const csv = file(
      'broken.csv',
      ['title,endpoint,organization_name', ...rows, '"Never closed,https://x.test/,Half Co'].join('\n'),
    );
    const error = await importer()
      .import(csv)
      .then(
        () => null,
        (err: Error) => err,
      );
    expect(error).to.be.instanceOf(ImportFileError);
    expect(error!.message).to.match(/^The file is not valid CSV \(line 4502\): /);
    expect(await serversOf('Half Co')).to.deep.equal([]);
    expect(await rowCount(f.engine.knex, 'organizations', { name: 'Half Co' })).to.equal(0);

    // Mended, it imports whole.
    fs.writeFileSync(csv, ['title,endpoint,organization_name', ...rows].join('\n'));
    expect(await importer().import(csv)).to.include({ imported: 4_500, errors: 0 });
  });
});
