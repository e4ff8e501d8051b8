export { confirmationSweepTask, processConfirmationMails } from './jobs';
export { confirmRoutes } from './routes';
