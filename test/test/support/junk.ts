/**
 * What the fuzz suite (test/test/fuzz.test.ts) sends: junk for path segments, query values, whole bodies and
 * single body members. Each list names the kind of trouble it carries.
 */

const deep = (levels: number, open: string, close: string, inner = '1') =>
  open.repeat(levels) + inner + close.repeat(levels);

/** Texts for a path segment or a query value, written as they go on the wire (already percent-encoded). */
export const TEXT_JUNK: string[] = [
  '%', // bad percent-encoding
  '%ZZ',
  '%E0%A4%A',
  '%C0%AF', // overlong UTF-8
  '%00', // NUL
  '%0D%0ASet-Cookie:%20x=1', // header injection
  'Infinity', // non-finite and huge numbers
  '-Infinity',
  'NaN',
  '1e400',
  '-1',
  '0',
  '99999999999999999999999999',
  '0x10',
  '1.5',
  encodeURIComponent("1' OR '1'='1"), // SQL injection
  encodeURIComponent('1; DROP TABLE users; --'),
  encodeURIComponent('{{7*7}}'), // template injection
  encodeURIComponent('${7*7}'),
  encodeURIComponent('<script>alert(1)</script>'),
  encodeURIComponent('💥🚀 ünïcödé'), // unicode, right-to-left override, control characters
  encodeURIComponent('\u202egnp.exe'),
  encodeURIComponent('\u0001\u0002\u001b[31m'),
  '..%2F..%2Fetc%2Fpasswd',
  'a'.repeat(6_000), // long (the URL stays under node's 16 KB header limit)
  '',
  '[]',
];

/** Whole request bodies that are no valid JSON object, or that are one in a hostile way. */
export const BODY_JUNK: Array<{ name: string; body: string | Buffer; type?: string }> = [
  { name: 'truncated object', body: '{"a":' },
  { name: 'bare brace', body: '{' },
  { name: 'unclosed array', body: '[' },
  { name: 'null', body: 'null' },
  { name: 'string', body: '"x"' },
  { name: 'number', body: '12' },
  { name: 'array', body: '[1,2]' },
  { name: 'duplicate keys', body: '{"email":"a@b.test","email":"c@d.test","name":"x","name":7}' },
  { name: 'prototype pollution', body: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}' },
  { name: 'NUL byte', body: '\u0000' },
  { name: 'invalid UTF-8', body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) },
  { name: 'deep arrays', body: deep(5_000, '[', ']') },
  { name: 'deep objects', body: deep(2_000, '{"a":', '}') },
  { name: 'huge number', body: '{"id":1e400,"page":-1e400}' },
  { name: '1 MB string', body: JSON.stringify({ name: 'x'.repeat(1_048_576), email: 'a@b.test' }) },
  { name: 'json as text/plain', body: '{"email":"a@b.test"}', type: 'text/plain' },
  { name: 'form encoded', body: 'email=a%40b.test&name=x', type: 'application/x-www-form-urlencoded' },
  {
    name: 'xml',
    body: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    type: 'application/xml',
  },
];

const nested = (levels: number): unknown => (levels === 0 ? 1 : [nested(levels - 1)]);

/** Values for one body member, of every type and of hostile content. */
export const VALUE_JUNK: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  2 ** 64,
  '',
  ' ',
  '\u0000\u0001',
  '💥'.repeat(200),
  "' OR 1=1 --",
  '{{7*7}}',
  '<img src=x onerror=alert(1)>',
  '=HYPERLINK("http://evil.test")',
  'x'.repeat(70_000),
  [],
  [null, 'x', -1],
  {},
  { $gt: '' },
  nested(200),
];
