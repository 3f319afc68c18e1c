import { monotonicFactory } from 'ulidx';

const ulid = monotonicFactory();

/** Prefixed ULIDs (DECISIONS.md §1); organisations and projects are plain ULIDs. */
export const newId = {
  org: () => ulid(),
  project: () => ulid(),
  file: () => `f_${ulid()}`,
  user: () => `usr_${ulid()}`,
  role: () => `rol_${ulid()}`,
  token: () => `tok_${ulid()}`,
  case: () => `cas_${ulid()}`,
  log: () => `log_${ulid()}`,
  app: () => `app_${ulid()}`,
  dataset: () => `ds_${ulid()}`,
  request: () => `req_${ulid()}`,
};
