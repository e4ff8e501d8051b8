// The ssl feature's front door: what the rest of the plugin may use (docs/architecture.md, feature folders).
export { sslRoutes } from './routes';
export { DEFAULT_SSL_OPTIONS, SSL_JOB, SSL_OPTIONS, sslOptionsSchema, SslService } from './service';
export type { SslOptions } from './service';
