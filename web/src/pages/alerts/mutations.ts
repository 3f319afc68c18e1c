// The Alerts pages' writes (monitors:write): each a /v1 call answering what the API answered.
import { api, data } from '../../api/client';
import type { Channel, ChannelKind, Monitor, MonitorBody } from './model';

export const muteMonitor = (id: string, until: string | null): Promise<Monitor> =>
  data(api.PATCH('/v1/monitors/{id}', { params: { path: { id } }, body: { muted_until: until } }));

export const createMonitor = (body: MonitorBody): Promise<Monitor> => data(api.POST('/v1/monitors', { body }));

export const updateMonitor = (id: string, body: Partial<MonitorBody>): Promise<Monitor> =>
  data(api.PATCH('/v1/monitors/{id}', { params: { path: { id } }, body }));

export const deleteMonitor = (id: string) => data(api.DELETE('/v1/monitors/{id}', { params: { path: { id } } }));

export const testMonitor = (id: string) => data(api.POST('/v1/monitors/{id}/test', { params: { path: { id } } }));

export const createChannel = (body: { name: string; kind: ChannelKind; url: string }): Promise<Channel & { signing_secret?: string }> =>
  data(api.POST('/v1/channels', { body }));

export const testChannel = (id: string) => data(api.POST('/v1/channels/{id}/test', { params: { path: { id } } }));
