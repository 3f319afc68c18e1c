import { one } from '../shared/one.js';

export const port = 8080 + one;
