/** Every organisation has these roles (DECISIONS.md §12); Owner is the one the ownership rules protect. */
export const systemRoles = ['Owner', 'Admin', 'Developer', 'Viewer'] as const;
export type SystemRole = (typeof systemRoles)[number];
export const ownerRole: SystemRole = 'Owner';
