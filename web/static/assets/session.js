// Who is signed in, and what that lets them do here. The page hides what a
// role may not do, but the server decides: every refusal it sends is shown.

import { call } from './api.js';

export const session = {
  me: null, // GET /me
  withKey: false, // signed in with an API key (no session, no password)
  permissions: [], // GET /me/permissions, as read when signing in
};

const curators = ['global_curator', 'curator'];

/** role returns the signed-in person's role, or ''. */
export const role = () => (session.me ? session.me.role : '');
export const isAdmin = () => role() === 'admin';
/** curatesOrAdmin: admins and curators create connectors, pairs and tools. */
export const curatesOrAdmin = () => isAdmin() || curators.includes(role());
/** canUseCredentials: every role but limited. */
export const canUseCredentials = () => curatesOrAdmin() || role() === 'basic';

/**
 * permissions returns the permissions the person holds (GET
 * /me/permissions: their role's and their groups' grants), none if they
 * cannot be read.
 */
export async function permissions() {
  try {
    const { data } = await call('GET', 'me/permissions');
    return Array.isArray(data) ? data : [];
  } catch {
    return [];
  }
}

/** holds reports whether the person holds permission p, asked afresh. */
export async function holds(p) {
  return (await permissions()).includes(p);
}


/**
 * homeView is where a person lands: the search page, for everyone who may
 * search (every role but limited, which has no basic access).
 */
export function homeView() {
  return role() === 'limited' ? 'account' : 'search';
}

/**
 * groupChoices returns the groups the person may share with, as {id,
 * name}: every group for an admin (with names), otherwise the groups of
 * /me (ids only: the group listing is for admins).
 */
export async function groupChoices() {
  if (isAdmin()) {
    const { data } = await call('GET', 'manage/admin/user-group');
    return data.map((g) => ({ id: g.id, name: g.name })).sort((a, b) => a.id - b.id);
  }
  return (session.me.groups || []).map((id) => ({ id, name: null }));
}
