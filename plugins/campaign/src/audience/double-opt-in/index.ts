export { processConfirmationMails } from './jobs';
export { confirmRoutes } from './routes';
