export const file = 'file';
