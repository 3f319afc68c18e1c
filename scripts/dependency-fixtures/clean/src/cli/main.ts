import { media } from '../media/media.js';

export const run = () => media();
