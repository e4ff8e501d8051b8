export { senderProfileRoutes } from './routes';
export { SenderProfilesService } from './service';
