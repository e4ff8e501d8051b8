import { expect } from 'chai';
import pino from 'pino';
import { isDatabaseFull, isDatabaseUnavailable, isSchemaBehind } from '../src/db/errors';
import { asAppError } from '../src/http/error-handler';
import { whileDatabaseAway } from '../src/db/while-database-away';

/** mysql2's errors as it raises them: a network error on the connection is marked fatal. */
const mysqlError = (code: string, fatal = false) => Object.assign(new Error(code), { code, fatal });

describe('a database that cannot be reached answers 503', () => {
  const log = pino({ level: 'silent' });

  it('connection refused or lost, the server shutting down, or no connection in time: 503', () => {
    for (const err of [
      mysqlError('ECONNREFUSED', true),
      mysqlError('PROTOCOL_CONNECTION_LOST', true),
      mysqlError('ER_SERVER_SHUTDOWN'),
      Object.assign(new Error('Knex: Timeout acquiring a connection'), { name: 'KnexTimeoutError' }),
    ]) {
      expect(isDatabaseUnavailable(err), err.message).to.equal(true);
      expect(asAppError(err, log)).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    }
  });

  it('a database that cannot write for want of space: 503 saying so, waited for like an outage', async () => {
    for (const err of [
      Object.assign(new Error('COMMIT; - database or disk is full'), { code: 'SQLITE_FULL' }),
      Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }),
      mysqlError('ER_RECORD_FILE_FULL'),
      mysqlError('ER_DISK_FULL'),
    ]) {
      expect(isDatabaseFull(err), err.message).to.equal(true);
      expect(isDatabaseUnavailable(err), err.message).to.equal(true);
      const answer = asAppError(err, log);
      expect(answer).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(answer.message).to.contain('no space left');
    }
    let tries = 0;
    const full = () =>
      ++tries < 3 ? Promise.reject(Object.assign(new Error('full'), { code: 'SQLITE_FULL' })) : Promise.resolve(tries);
    expect(await whileDatabaseAway(full, 10_000)).to.equal(3);
  });

  it('a refused statement, or a socket error that is not the database connection: still 500', () => {
    for (const err of [mysqlError('ER_PARSE_ERROR'), mysqlError('ECONNREFUSED'), new Error('boom'), null]) {
      expect(isDatabaseUnavailable(err)).to.equal(false);
      expect(asAppError(err ?? {}, log).status).to.equal(500);
    }
  });

  it('a table or column the database lacks (its migrations not run): 503 saying to run migrate', () => {
    for (const err of [
      mysqlError('ER_NO_SUCH_TABLE'),
      mysqlError('ER_BAD_FIELD_ERROR'),
      Object.assign(new Error('select * from `users` - no such table: users'), { code: 'SQLITE_ERROR' }),
      Object.assign(new Error('select `b` from `t` - no such column: b'), { code: 'SQLITE_ERROR' }),
    ]) {
      expect(isSchemaBehind(err), err.message).to.equal(true);
      expect(asAppError(err, log)).to.include({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    }
    const syntax = Object.assign(new Error('select - near "from": syntax error'), { code: 'SQLITE_ERROR' });
    expect(asAppError(syntax, log).status).to.equal(500);
  });

  it('whileDatabaseAway: runs the work again while the database is away, throws any other error at once', async () => {
    let tries = 0;
    const away = () => (++tries < 3 ? Promise.reject(mysqlError('ECONNREFUSED', true)) : Promise.resolve(tries));
    expect(await whileDatabaseAway(away, 10_000)).to.equal(3);
    tries = 0;
    const refused = () => (++tries, Promise.reject(mysqlError('ER_PARSE_ERROR')));
    const thrown = await whileDatabaseAway(refused, 10_000).catch((err: Error) => err);
    expect([tries, (thrown as Error).message]).to.deep.equal([1, 'ER_PARSE_ERROR']);
    tries = 0;
    const late = await whileDatabaseAway(away, 100).catch((err: Error) => err);
    expect([tries, (late as Error).message]).to.deep.equal([1, 'ECONNREFUSED']);
  });
});
