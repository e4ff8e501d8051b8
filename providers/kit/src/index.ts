export * from './types';
export * from './errors';
export * from './crypto';
export * from './request';
export * from './replay';
export * from './mailgun-signature';
export * from './credentials';
export * from './event-shape';
