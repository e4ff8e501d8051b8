import { expect } from 'chai';
import { defaultAlertSender } from '../sender-address';

describe('server-monitor: the default sender of alert mails', () => {
  it("is monitor@ PUBLIC_URL's host, an IP address written as an address literal", () => {
    expect(defaultAlertSender('https://status.acme.example/')).to.equal('monitor@status.acme.example');
    expect(defaultAlertSender('http://192.0.2.10:3000')).to.equal('monitor@[192.0.2.10]');
    expect(defaultAlertSender('http://[2001:db8::1]:3000')).to.equal('monitor@[IPv6:2001:db8::1]');
  });
});
