export * from './services';
export * from './engine';
export * from './wait';
export * from './schema-guard';
