export * from './services';
export * from './engine';
export * from './wait';
export * from './schema-guard';
export * from './bench';
export * from './api-client';
export * from './recording-logger';
export * from './smtp-sink';
