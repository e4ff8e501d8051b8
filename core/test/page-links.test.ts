import { expect } from 'chai';
import { paginatedBody } from '../src/http/envelope';

const url = (n: number) => `/things?page=${n}`;
const links = (data: unknown[], current: number, extra: { total?: number; more?: boolean } = {}) => {
  const { pagination } = paginatedBody(
    data,
    { total: extra.total ?? 10_000, per_page: 100, current_page: current, more: extra.more },
    url,
    '1',
  );
  return [pagination.last_page, pagination.next_page_url, pagination.prev_page_url];
};
const rows = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * A capped total means "at least" (a search counted up to 10,000): its pages past the count are served, and
 * their links must lead on (a review's finding, session 27: the links stopped at page 100 of 250).
 */
describe('page links', () => {
  it('leads on past a capped total while full pages have more, and back from any page with rows', () => {
    expect(links(rows(100), 100, { more: true })).to.deep.equal([101, url(101), url(99)]);
    expect(links(rows(100), 101, { more: true })).to.deep.equal([102, url(102), url(100)]);
    expect(links(rows(75), 250)).to.deep.equal([250, null, url(249)]);
  });

  it('keeps exact totals as they were: the last page from the total, a page past it links back to the last', () => {
    expect(links(rows(100), 1, { total: 250 })).to.deep.equal([3, url(2), null]);
    expect(links(rows(50), 3, { total: 250 })).to.deep.equal([3, null, url(2)]);
    expect(links([], 9, { total: 250 })).to.deep.equal([3, null, url(3)]);
  });
});
