import { expect } from 'chai';
import { describeEachBackend } from '@switchboard/core/testing';
import { addServer, monitorFixture, MonitorFixture, organization } from '../../shared/tests/support';

const TITLE = '<img src=x onerror=alert(1)>"\'&';

/** issue 26: what tenants wrote (a server's title, from the API or a CSV import) is text on the dashboard, never markup. */
describeEachBackend('server-monitor: the dashboard escapes what tenants wrote', (backend) => {
  let f: MonitorFixture;
  before(async () => (f = await monitorFixture(backend())));
  after(async () => f?.close());

  it('writes a down server’s title as text', async () => {
    const org = await organization(f.engine);
    await addServer(f.engine, org, 'https://escaped.test/', {
      title: TITLE,
      state: 'down',
      status: 'unreachable',
      is_up: false,
      failing_since: new Date(Date.now() - 60_000),
    });
    const page = await f.call('/dashboard').expect(200);
    expect(page.headers['content-type']).to.match(/^text\/html/);
    expect(page.text).to.contain('&lt;img src=x onerror=alert(1)&gt;');
    expect(page.text).not.to.contain('<img');
  });
});
