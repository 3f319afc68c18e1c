import { file } from '../media/file.js';

export const record = file;
