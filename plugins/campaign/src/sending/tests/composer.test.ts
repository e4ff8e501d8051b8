import { expect } from 'chai';
import { Composer } from '../composer';
import type { MailTracking } from '../tracking-links';

/** The mail of one subscriber with no fields but an address, its unsubscribe link given (and its tracking). */
const composedFor = (composer: Composer, tracking?: MailTracking) =>
  composer.compose(
    {
      id: 5,
      email: 'ada@example.com',
      first_name: null,
      last_name: null,
      company_name: null,
      phone: null,
      job_title: null,
      meta: {},
    },
    { unsubscribe: 'https://acme.example/u?token=1', tracking },
    '1.5.3@acme.example',
  );

describe("campaign: the composer and the adapters' headers", () => {
  it("leaves out an adapter's header that names a field of the mail or one of ours, in any case", () => {
    const composer = new Composer(
      { id: 3, subject: 'Hi', preheader: null, content_html: null, content_text: 'Hello' },
      { fromName: null, fromEmail: 'news@acme.example', replyTo: null },
      {
        providerHeaders: () => ({
          'X-SMTPAPI': '{}',
          'list-unsubscribe': '<https://evil.example/u>',
          'x-campaign-message-id': '999',
          from: 'ceo@bank.example',
        }),
      },
    );
    const mail = composedFor(composer);
    expect(mail.headers).to.deep.equal({
      'X-SMTPAPI': '{}',
      'X-Campaign-Message-Id': '3',
      'X-Campaign-Subscriber-Id': '5',
      'List-Unsubscribe': '<https://acme.example/u?token=1>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
    expect(mail.from).to.equal('news@acme.example');
  });

  it('writes a link whose text is its own merge tag once in the text part made from the HTML', () => {
    const composer = new Composer(
      {
        id: 3,
        subject: 'Hi',
        preheader: null,
        content_html: '<p>Leave: <a href="{{unsubscribe_url}}">{{unsubscribe_url}}</a></p>',
        content_text: null,
      },
      { fromName: null, fromEmail: 'news@acme.example', replyTo: null },
    );
    const mail = composedFor(composer);
    expect(mail.text).to.equal('Leave: https://acme.example/u?token=1');
  });

  it('tracks each link as a browser reads its href: raw & before a legacy entity name, not data-href', () => {
    const composer = new Composer(
      {
        id: 3,
        subject: 'Hi',
        preheader: null,
        content_html:
          '<p><a href="https://shop.example/sale?utm=mail&region=eu&currency=usd&notify=1&amp;copy=2&lt;">Sale</a>' +
          ' <a data-href="https://shop.example/data" href="https://shop.example/real">Real</a></p>',
        content_text: null,
      },
      { fromName: null, fromEmail: 'news@acme.example', replyTo: null },
    );
    const clicked: string[] = [];
    const mail = composedFor(composer, { click: (url) => (clicked.push(url), 'https://t.example/c') });
    expect(clicked).to.deep.equal([
      'https://shop.example/sale?utm=mail&region=eu&currency=usd&notify=1&copy=2<',
      'https://shop.example/real',
    ]);
    expect(mail.html).to.contain('data-href="https://shop.example/data" href="https://t.example/c"');
  });
});
