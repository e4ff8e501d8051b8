import crypto from 'node:crypto';
import { expect } from 'chai';
import { SecretBox } from '@switchboard/core';
import { MonitorAddresses } from '../addresses';
import {
  endpointProblem,
  isSecretParameter,
  openEndpoint,
  sealEndpoint,
  sealEndpointKeeping,
  shownEndpoint,
} from '../endpoints';

describe('server-monitor: endpoints as saved', () => {
  const box = new SecretBox(crypto.randomBytes(32));
  const addresses = new MonitorAddresses();

  it('refuses what is no URL, other schemes, and metadata or link-local addresses given as such', () => {
    const problems = {
      '': 'missing',
      'example.com/health': 'not a valid URL',
      'http://': 'not a valid URL',
      'ftp://example.com/': 'not an http(s) URL',
      'file:///etc/passwd': 'not an http(s) URL',
      'javascript:alert(1)': 'not an http(s) URL',
      'http://169.254.169.254/latest/meta-data/': 'address 169.254.169.254 is not allowed (link-local/metadata)',
      'http://0xa9fea9fe/': 'address 169.254.169.254 is not allowed (link-local/metadata)',
      'http://[fd00:ec2::254]/': 'address fd00:ec2::254 is not allowed (link-local/metadata)',
      'https://100.100.100.200/': 'address 100.100.100.200 is not allowed (link-local/metadata)',
      'https://[fe80::1]:8443/': 'address fe80::1 is not allowed (link-local/metadata)',
      // The metadata service in the IPv6 forms that carry an IPv4 address: 6to4, Teredo, local-use NAT64.
      'http://[2002:a9fe:a9fe::1]/': 'address 2002:a9fe:a9fe::1 is not allowed (link-local/metadata)',
      'http://[2001:0:4136:e378:8000:63bf:5601:5601]/':
        'address 2001:0:4136:e378:8000:63bf:5601:5601 is not allowed (link-local/metadata)',
      'http://[64:ff9b:1:a9fe:a9:fe00::]/': 'address 64:ff9b:1:a9fe:a9:fe00:: is not allowed (link-local/metadata)',
      [`https://example.com/${'x'.repeat(2048)}`]: 'longer than 2048 characters',
    };
    for (const [url, problem] of Object.entries(problems))
      expect(endpointProblem(url, addresses), url).to.equal(problem);
    // Private networks, loopback and names are allowed: each connection is checked when it is made.
    for (const url of [
      'http://10.0.0.5:8080/health',
      'http://127.0.0.1:3000/',
      'https://[::1]/',
      'https://192.168.1.1/',
      'https://intranet.example/',
      'https://user:pass@example.com/',
    ])
      expect(endpointProblem(url, addresses), url).to.equal(null);
    const allowing = MonitorAddresses.fromEnv({ MONITOR_ALLOWED_RANGES: '169.254.0.0/16' });
    expect(endpointProblem('http://169.254.1.2/', allowing)).to.equal(null);
    expect(endpointProblem('http://[fe80::1]/', allowing)).to.match(/link-local/);
  });

  it('seals a password, masks it where it is shown, and opens it again exactly', () => {
    const url = 'https://ops:p%40ss%3Aw%2Fo rd@example.com:8443/health?x=1';
    const stored = sealEndpoint(url, box);
    expect(stored.endpoint).to.equal('https://ops:***@example.com:8443/health?x=1');
    expect(stored.endpoint_secret).to.match(/^v1:/).and.not.contain('p%40ss');
    expect(openEndpoint(stored, box)).to.equal('https://ops:p%40ss%3Aw%2Fo%20rd@example.com:8443/health?x=1');
    expect(shownEndpoint(url)).to.equal(stored.endpoint);
    expect(shownEndpoint(stored.endpoint)).to.equal(stored.endpoint);
    // Nothing to seal: kept as given, byte for byte.
    for (const plain of ['https://Example.com', 'https://ops@example.com/', 'http://example.com/a@b', 'not a url'])
      expect(sealEndpoint(plain, box), plain).to.deep.equal({ endpoint: plain, endpoint_secret: null });
    expect(openEndpoint({ endpoint: 'https://ops@example.com/', endpoint_secret: null }, box)).to.equal(
      'https://ops@example.com/',
    );
    // Another key does not open it.
    expect(() => openEndpoint(stored, new SecretBox(crypto.randomBytes(32)))).to.throw();
  });

  it('seals secret query values (token, api_key, apiKey...) as it seals a password, the query kept byte for byte', () => {
    for (const name of [
      'token',
      'access_token',
      'api_key',
      'X-Api-Key',
      'apiKey',
      'apikey',
      'client_secret',
      'sig',
      'pass',
      'auth',
      'hub.verify_token',
      'private%5Ftoken',
    ])
      expect(isSecretParameter(name), name).to.equal(true);
    for (const name of ['monkey', 'page', 'keyword', 'key_id', 'bypass', 'oauth', 'format'])
      expect(isSecretParameter(name), name).to.equal(false);
    const url = 'https://ops:pw@example.com/health?x=1&token=abc%2Bdef&empty=&api_key=&sig=zz+y&q=a%20b&apiKey=K#frag';
    const stored = sealEndpoint(url, box);
    expect(stored.endpoint).to.equal(
      'https://ops:***@example.com/health?x=1&token=***&empty=&api_key=&sig=***&q=a%20b&apiKey=***#frag',
    );
    expect(stored.endpoint_secret).to.not.contain('abc').and.not.contain('pw');
    expect(openEndpoint(stored, box)).to.equal(new URL(url).href);
    expect(shownEndpoint(url)).to.equal(stored.endpoint);
    // A query secret without a password; a value that is the mask itself is kept in its place.
    const tokenOnly = 'http://127.0.0.1:9/ping?token=***&key=real';
    const sealed = sealEndpoint(tokenOnly, box);
    expect(sealed.endpoint).to.equal('http://127.0.0.1:9/ping?token=***&key=***');
    expect(openEndpoint(sealed, box)).to.equal(tokenOnly);
    // Written back as read, the secrets are kept; the mask in another URL is refused (null).
    expect(sealEndpointKeeping(sealed.endpoint, sealed, box)).to.deep.equal(sealed);
    expect(sealEndpointKeeping('http://127.0.0.1:9/other?token=***&key=***', sealed, box)).to.equal(null);
    expect(sealEndpointKeeping('http://elsewhere.test/ping?key=***', stored, box)).to.equal(null);
    const replaced = sealEndpointKeeping('http://127.0.0.1:9/ping?token=t2&key=k2', sealed, box)!;
    expect(openEndpoint(replaced, box)).to.equal('http://127.0.0.1:9/ping?token=t2&key=k2');
    // No secret: kept as given, byte for byte.
    for (const plain of [
      'https://example.com/?q=1&token=',
      'https://example.com/?page=2',
      'https://example.com/?token',
    ])
      expect(sealEndpoint(plain, box), plain).to.deep.equal({ endpoint: plain, endpoint_secret: null });
  });

  it('tells public from private addresses, and refuses a private one after a public hop', () => {
    for (const ip of ['93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(addresses.isPublic(ip), ip).to.equal(true);
    for (const ip of ['10.1.2.3', '127.0.0.1', '::1', 'fd12::1', '100.64.0.1', '::ffff:192.168.0.1', '64:ff9b::a00:1'])
      expect(addresses.isPublic(ip), ip).to.equal(false);
    expect(addresses.reason('10.1.2.3')).to.equal(null);
    expect(addresses.reason('10.1.2.3', 'db.internal', true)).to.equal(
      'a redirect from a public address to db.internal (private or loopback) is not followed',
    );
    expect(addresses.reason('8.8.8.8', undefined, true)).to.equal(null);
    // MONITOR_ALLOWED_RANGES lifts the metadata refusal only: never the one after a public hop.
    const allowing = MonitorAddresses.fromEnv({ MONITOR_ALLOWED_RANGES: '169.254.0.0/16,10.0.0.0/8' });
    expect(allowing.reason('169.254.169.254')).to.equal(null);
    expect(allowing.reason('169.254.169.254', undefined, true)).to.match(/redirect from a public address/);
    expect(allowing.reason('10.1.2.3', undefined, true)).to.match(/redirect from a public address/);
  });
});
