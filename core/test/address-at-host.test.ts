import { expect } from 'chai';
import nodemailer from 'nodemailer';
import { addressAtHost } from '../src';
import { smtpSink } from '../src/testing';

describe("mail the engine writes for itself: its sender at the URL's host", () => {
  it('writes an IP address as an address literal, which a relay takes (a bare IPv6 one it refused)', async () => {
    const senders = ['https://news.acme.example/', 'http://192.0.2.10:3000', 'http://[::1]:3000'].map((url) =>
      addressAtHost('no-reply', url),
    );
    expect(senders).to.deep.equal(['no-reply@news.acme.example', 'no-reply@[192.0.2.10]', 'no-reply@[IPv6:::1]']);
    const sink = await smtpSink();
    const relay = nodemailer.createTransport({ url: sink.url });
    try {
      for (const from of senders) await relay.sendMail({ from, to: 'ada@acme.example', subject: 'x', text: 'y' });
      expect(sink.mails).to.have.length(3);
    } finally {
      relay.close();
      await sink.close();
    }
  });
});
