import { expect } from 'chai';
import { createLogger } from '../src/logger';

describe('the logger censors secret fields a log call passes by mistake', () => {
  it('censors tokens, passwords, secrets and authorization headers at the top and one level down', () => {
    const lines: Array<Record<string, any>> = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(JSON.parse(line)) });
    logger.info(
      {
        token: 'sb_secret-token',
        password: 'hunter2',
        options: { secret: 'whsec_1', apiKey: 'k-1', keep: 'visible' },
        req: { headers: { authorization: 'Bearer sb_x', host: 'acme.test' } },
        tokenId: 7,
      },
      'a careless line',
    );
    const [line] = lines;
    expect(JSON.stringify(line)).to.not.match(/sb_secret-token|hunter2|whsec_1|k-1|Bearer/);
    expect(line).to.deep.include({ token: '[redacted]', password: '[redacted]', tokenId: 7, msg: 'a careless line' });
    expect(line.options).to.deep.equal({ secret: '[redacted]', apiKey: '[redacted]', keep: 'visible' });
    expect(line.req.headers).to.deep.equal({ authorization: '[redacted]', host: 'acme.test' });
  });
});
