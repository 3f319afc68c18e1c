import type { Api } from '../../http/types.js';
import type { AppContext } from '../../app/context.js';
import type { ChannelService } from '../channel-service.js';
import type { NotificationService } from '../notification-service.js';
import { ChannelSchema, DeliverySchema } from './schemas.js';
import { registerChannelRoutes } from './channels.js';
import { registerDeliveryRoutes } from './deliveries.js';

/** The notifications capability's /v1 routes. */
export function registerNotificationRoutes(v1: Api, ctx: AppContext, channels: ChannelService, notifications: NotificationService): void {
  v1.addSchema(ChannelSchema);
  v1.addSchema(DeliverySchema);
  registerChannelRoutes(v1, ctx, channels);
  registerDeliveryRoutes(v1, ctx, notifications);
}
