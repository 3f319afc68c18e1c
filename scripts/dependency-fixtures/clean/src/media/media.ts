import { port } from '../config/config.js';

export const media = () => port;
