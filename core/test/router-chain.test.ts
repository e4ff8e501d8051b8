import { expect } from 'chai';
import Koa from 'koa';
import Router from '@koa/router';
import request from 'supertest';
import { ApiRegistry } from '../src/http/api-registry';
import { cannotMatchUnder, routerChain } from '../src/http/router-chain';

const routerOf = (prefix: string, ...paths: string[]) => {
  const router = new Router(prefix ? { prefix } : {});
  for (const path of paths) router.register(path, ['GET'], (ctx) => void (ctx.body = `${prefix}${path}`));
  return router;
};

describe('router chain: only the routers that could match a path under a group prefix', () => {
  it('leaves out a router whose every route names another segment, or ends, where the prefix goes on', () => {
    expect(cannotMatchUnder(routerOf('/api/c', '/subscribers/:id', '/lists', '/'), '/api/c/webhook')).to.equal(true);
    expect(cannotMatchUnder(routerOf('', '/health', '/api/docs/:asset'), '/api/c/webhook')).to.equal(true);
    expect(cannotMatchUnder(routerOf('/api/c/webhook', '/:provider'), '/api/c/webhook')).to.equal(false);
  });

  it('keeps a router a route of which could match there: a parameter, other case, a wildcard, an optional group', () => {
    for (const path of ['/:anything/:id', '/WEBHOOK/:id', '/*rest', '/webhook{/:id}/x', '/x{/:y}/:z/w'])
      expect(cannotMatchUnder(routerOf('/api/c', path), '/api/c/webhook'), path).to.equal(false);
  });

  it('answers as the whole chain does: the first matching router wins, 405 and 404 alike', async () => {
    const registry = new ApiRegistry({ policies: {}, resources: [] });
    const outer = registry.forPlugin('p').group({ prefix: '/api/c', tag: 't', auth: 'none' });
    const inner = registry.forPlugin('p').group({ prefix: '/api/c/webhook', tag: 't', auth: 'none' });
    outer.router.register('/:kind/:id', ['GET'], (ctx) => void (ctx.body = 'outer'));
    outer.router.register('/lists', ['GET'], (ctx) => void (ctx.body = 'lists'));
    inner.router.register('/:provider', ['GET', 'POST'], (ctx) => void (ctx.body = 'inner'));
    const pages = registry.forPlugin('p').group({ prefix: '/api/pages', tag: 't', auth: 'none' });
    pages.router.register('/', ['GET'], (ctx) => void (ctx.body = 'page'));
    const app = new Koa();
    app.use(routerChain([routerOf('', '/health'), outer.router, inner.router, pages.router], registry));
    const server = app.callback();
    expect((await request(server).get('/api/c/webhook/x')).text).to.equal('outer');
    expect((await request(server).post('/api/c/webhook/x')).text).to.equal('inner');
    const refused = await request(server).put('/api/c/webhook/x');
    expect([refused.status, refused.headers.allow]).to.deep.equal([405, 'HEAD, GET, POST']);
    expect((await request(server).get('/api/c/lists')).text).to.equal('lists');
    expect((await request(server).get('/API/C/WEBHOOK/y')).text).to.equal('outer');
    expect((await request(server).get('/health')).status).to.equal(200);
    expect((await request(server).get('/api/c/webhook/x/y')).status).to.equal(404);
    // Under a prefix whose routes all end before the path does, no router could match: still 501 and 404.
    expect((await request(server).get('/api/pages')).text).to.equal('page');
    expect((await request(server).trace('/api/pages/x/y')).status).to.equal(501);
    expect((await request(server).get('/api/pages/x/y')).status).to.equal(404);
  });
});
