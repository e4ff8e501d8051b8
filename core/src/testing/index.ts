export * from './services';
export * from './engine';
export * from './wait';
