export { Scheduler } from './scheduler';
