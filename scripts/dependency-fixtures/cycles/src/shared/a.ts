// A cycle between two files.
import { b } from './b.js';

export const a = () => b;
