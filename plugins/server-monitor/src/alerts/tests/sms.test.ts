import { expect } from 'chai';
import { loadConfig } from '@switchboard/core';
import { recordingLogger } from '@switchboard/core/testing';
import { smsSenderOf } from '../sms';
import { smsStub, SmsStub } from '../../shared/tests/sms-stub';

const senderFor = (env: Record<string, string>, logger = recordingLogger('info').logger) =>
  smsSenderOf(loadConfig({ env, file: false }), logger);

describe('server-monitor: SMS drivers', () => {
  let sms: SmsStub;
  before(async () => {
    sms = await smsStub();
  });
  after(async () => sms?.close());

  it('writes the message to the log by default, and with SMS_DRIVER=log', async () => {
    for (const env of [{}, { SMS_DRIVER: 'log' }] as Array<Record<string, string>>) {
      const log = recordingLogger('info');
      await senderFor(env, log.logger).send('+15550123', 'DOWN: Web');
      expect(log.entries.map((e) => [e.msg, e.sms])).to.deep.equal([
        ['SMS (log driver)', { to: '+15550123', text: 'DOWN: Web' }],
      ]);
    }
    expect(sms.requests).to.have.length(0);
  });

  it('posts To, From and Body as a form to SMS_URL, without credentials when SMS_USER is unset', async () => {
    await senderFor({ SMS_DRIVER: 'http', SMS_URL: `${sms.url}/send`, SMS_FROM: 'Switchboard' }).send(
      '+15550123',
      'UP again: Web & API',
    );
    expect(sms.requests).to.have.length(1);
    expect(sms.requests[0]).to.include({ method: 'POST', path: '/send', authorization: undefined });
    expect(sms.requests[0].form).to.deep.equal({ To: '+15550123', From: 'Switchboard', Body: 'UP again: Web & API' });
  });

  it('fails on an answer other than 2xx, so that the alert is tried again', async () => {
    const sender = senderFor({ SMS_DRIVER: 'http', SMS_URL: `${sms.url}/send`, SMS_FROM: '+15550000' });
    sms.failNext(1, 429);
    const thrown = await sender.send('+15550123', 'x').then(
      () => null,
      (err: Error) => err,
    );
    expect(thrown?.message).to.equal('SMS API answered 429');
    await sender.send('+15550123', 'x');
    expect(sms.requests.slice(-2).map((r) => r.status)).to.deep.equal([429, 201]);
  });

  it('refuses an http driver without SMS_URL or SMS_FROM, and an unknown driver', () => {
    expect(() => senderFor({ SMS_DRIVER: 'http', SMS_FROM: '+15550000' })).to.throw(
      'SMS_DRIVER=http needs SMS_URL and SMS_FROM',
    );
    expect(() => senderFor({ SMS_DRIVER: 'http', SMS_URL: sms.url })).to.throw('needs SMS_URL and SMS_FROM');
    expect(() => senderFor({ SMS_DRIVER: 'pigeon' })).to.throw('SMS_DRIVER must be log or http, got "pigeon"');
  });
});
