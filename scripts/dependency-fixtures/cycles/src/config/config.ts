// A lower layer importing a higher one.
import { file } from '../media/file.js';

export const config = file;
