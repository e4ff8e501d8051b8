import { expect } from 'chai';
import { AppError } from '@switchboard/core';
import { parseSearch } from '../syntax';

describe('campaign: subscriber search syntax', () => {
  it('reads every operator, quoted values and plain words', () => {
    const search = parseSearch(
      'email:Ada@Example.COM name:"Ada Love" list:vip status:unsubscribed created:>2024-01-31 meta.plan:pro meta.tags:"early bird" hello "Two  words" grace@Example.org',
    );
    expect(search).to.deep.equal({
      emails: ['Ada@example.com', 'grace@example.org'],
      name: 'ada love',
      listCode: 'vip',
      status: 'unsubscribed',
      createdAfter: new Date('2024-02-01T00:00:00Z'),
      meta: [
        { key: 'plan', value: 'pro' },
        { key: 'tags', value: 'early bird' },
      ],
      words: ['hello', 'two', 'words'],
    });
  });

  it('is empty for no search', () => {
    expect(parseSearch(undefined)).to.deep.equal({ emails: [], meta: [], words: [] });
    expect(parseSearch('   ')).to.deep.equal({ emails: [], meta: [], words: [] });
    expect(parseSearch('""')).to.deep.equal({ emails: [], meta: [], words: [] });
  });

  const refusal = (text: string) => {
    try {
      parseSearch(text);
    } catch (err) {
      expect(err).to.be.instanceOf(AppError);
      expect((err as AppError).code).to.equal('VALIDATION_ERROR');
      expect((err as AppError).details?.field).to.equal('search');
      return (err as AppError).message;
    }
    throw new Error(`"${text}" was accepted`);
  };

  it('takes any email: value as an exact address, one that may match nobody', () => {
    expect(parseSearch('email:ada').emails).to.deep.equal(['ada']);
    expect(parseSearch('email:Ada@EXAMPLE.com').emails).to.deep.equal(['Ada@example.com']);
  });

  it('counts a repeated term once, and refuses more than sixteen different terms', () => {
    expect(parseSearch('x* x* x* ada ada meta.plan:pro meta.plan:pro email:a@b.co email:a@b.co')).to.deep.equal({
      emails: ['a@b.co'],
      meta: [{ key: 'plan', value: 'pro' }],
      words: ['x*', 'ada'],
    });
    expect(parseSearch(Array.from({ length: 40 }, () => 'x*').join(' ')).words).to.deep.equal(['x*']);
    const seventeen = Array.from({ length: 17 }, (_, i) => `w${i}`).join(' ');
    expect(refusal(seventeen)).to.equal('Search has 17 different terms; at most 16 are allowed');
    expect(parseSearch(Array.from({ length: 16 }, (_, i) => `w${i}`).join(' ')).words).to.have.length(16);
  });

  it('refuses an operator of one value given twice with two values; the same value counts once', () => {
    for (const text of [
      'name:zzzz name:hans',
      'list:l2 list:l1',
      'status:unsubscribed status:active',
      'created:>2099-01-01 created:>2020-01-01',
    ])
      expect(refusal(text), text).to.match(/^Search operator (name|list|status|created):>? may be given once$/);
    expect(parseSearch('status:active status:active name:Ada name:ada')).to.include({ status: 'active', name: 'ada' });
  });

  it('refuses a malformed operator with a message naming it', () => {
    expect(refusal('created:>yesterday')).to.contain('created:>');
    expect(refusal('created:>2024-02-30')).to.contain('created:>');
    expect(refusal('created:2024-01-01')).to.contain('created:');
    expect(refusal('status:sleeping')).to.contain('status:');
    expect(refusal('email:')).to.contain('email:');
    expect(refusal('meta.:x')).to.contain('meta.');
    expect(refusal('colour:red')).to.contain('Unknown search operator colour:');
    expect(refusal('name:"unclosed')).to.contain('unmatched double quote');
  });
});
