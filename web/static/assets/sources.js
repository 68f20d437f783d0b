// The 55 document sources (interface.md 2.7, in that order), with the
// names people know them by; which of them Quarry indexes (GET
// /manage/connector-sources: the sources it has a connector for); and
// the keys of each source's credential_json, as Onyx's credential forms
// name them.

import { call } from './api.js';

export const sources = [
  ['ingestion_api', 'Ingestion API'], ['slack', 'Slack'], ['web', 'Web'], ['google_drive', 'Google Drive'],
  ['gmail', 'Gmail'], ['requesttracker', 'Request Tracker'], ['github', 'GitHub'], ['gitbook', 'GitBook'],
  ['gitlab', 'GitLab'], ['guru', 'Guru'], ['bookstack', 'BookStack'], ['outline', 'Outline'],
  ['confluence', 'Confluence'], ['jira', 'Jira'], ['slab', 'Slab'], ['productboard', 'Productboard'],
  ['file', 'File'], ['coda', 'Coda'], ['notion', 'Notion'], ['zulip', 'Zulip'], ['linear', 'Linear'],
  ['hubspot', 'HubSpot'], ['document360', 'Document360'], ['gong', 'Gong'], ['google_sites', 'Google Sites'],
  ['zendesk', 'Zendesk'], ['loopio', 'Loopio'], ['dropbox', 'Dropbox'], ['sharepoint', 'SharePoint'],
  ['teams', 'Microsoft Teams'], ['salesforce', 'Salesforce'], ['discourse', 'Discourse'], ['axero', 'Axero'],
  ['clickup', 'ClickUp'], ['mediawiki', 'MediaWiki'], ['wikipedia', 'Wikipedia'], ['asana', 'Asana'],
  ['s3', 'Amazon S3'], ['r2', 'Cloudflare R2'], ['google_cloud_storage', 'Google Cloud Storage'],
  ['oci_storage', 'Oracle Cloud Storage'], ['xenforo', 'XenForo'], ['not_applicable', 'Not applicable'],
  ['discord', 'Discord'], ['freshdesk', 'Freshdesk'], ['fireflies', 'Fireflies'], ['egnyte', 'Egnyte'],
  ['airtable', 'Airtable'], ['highspot', 'Highspot'], ['drupal_wiki', 'Drupal Wiki'], ['imap', 'Email (IMAP)'],
  ['bitbucket', 'Bitbucket'], ['testrail', 'TestRail'], ['mock_connector', 'Mock connector'], ['user_file', 'User files'],
];

const names = new Map(sources);

/** sourceName returns the name of a source value, or the value itself. */
export const sourceName = (v) => names.get(v) ?? v;

/** pushed is the source whose pairs hold what other systems push to them. */
const pushed = 'ingestion_api';

let indexedAsked = null;

/**
 * indexedSources resolves to the Set of the sources Quarry indexes, asked
 * of the server once per sign-in, or to null when the server does not say
 * (a role that may not ask, or a server without the route).
 */
export function indexedSources() {
  indexedAsked ??= call('GET', 'manage/connector-sources').then(({ data }) => new Set(data.sources), () => {
    indexedAsked = null;
    return null;
  });
  return indexedAsked;
}

/** forgetIndexed forgets the answer of indexedSources (sign-out). */
export function forgetIndexed() {
  indexedAsked = null;
}

/**
 * sourceOptions returns <option>s for every source, by name; given the
 * sources Quarry indexes, in three groups: those, the ingestion API's, and
 * the others.
 */
export function sourceOptions(el, indexed = null) {
  const options = (list) => [...list].sort((a, b) => a[1].localeCompare(b[1]))
    .map(([v, n]) => el('option', { value: v }, `${n} (${v})`));
  if (!indexed) return options(sources);
  return [
    el('optgroup', { label: 'Indexed by Quarry' }, ...options(sources.filter(([v]) => indexed.has(v)))),
    el('optgroup', { label: 'Pushed through the ingestion API' }, ...options(sources.filter(([v]) => v === pushed))),
    el('optgroup', { label: 'Not indexed by Quarry yet' }, ...options(sources.filter(([v]) => v !== pushed && !indexed.has(v)))),
  ];
}

/**
 * indexing says in a sentence whether Quarry indexes source's pairs, given
 * the sources it indexes (null: not known, and nothing is said).
 */
export function indexing(source, indexed) {
  if (!indexed) return '';
  const name = sourceName(source);
  if (indexed.has(source)) return `Quarry indexes ${name}: its workers read the documents of every pair of this source.`;
  if (source === pushed) return 'Quarry reads nothing itself: the pairs of this source hold the documents other systems push through the ingestion API.';
  return `Quarry has no connector for ${name} yet: it does not index its pairs (their index attempts fail and say so). ` +
    'Other systems can still push documents to them through the ingestion API.';
}

// The keys of each source's credential_json, as Onyx v4.6.1's credential
// forms name them (its credentialTemplates): a new credential offers them.
// Sources without one need no secrets (web, file, mediawiki, wikipedia,
// ...). Where Onyx offers several ways to authenticate, the first.
const credentialKeys = {
  github: ['github_access_token'], gitlab: ['gitlab_url', 'gitlab_access_token'],
  bitbucket: ['bitbucket_email', 'bitbucket_api_token'], slack: ['slack_bot_token'],
  bookstack: ['bookstack_base_url', 'bookstack_api_token_id', 'bookstack_api_token_secret'],
  outline: ['outline_base_url', 'outline_api_token'], confluence: ['confluence_username', 'confluence_access_token'],
  jira: ['jira_user_email', 'jira_api_token'], productboard: ['productboard_access_token'], slab: ['slab_bot_token'],
  coda: ['coda_bearer_token'], notion: ['notion_integration_token'], guru: ['guru_user', 'guru_user_token'],
  gong: ['gong_access_key', 'gong_access_key_secret'], zulip: ['zuliprc_content'], linear: ['linear_access_token'],
  hubspot: ['hubspot_access_token'], document360: ['portal_id', 'document360_api_token'],
  loopio: ['loopio_subdomain', 'loopio_client_id', 'loopio_client_token'], dropbox: ['dropbox_access_token'],
  salesforce: ['sf_username', 'sf_password', 'sf_security_token'],
  sharepoint: ['sp_client_id', 'sp_client_secret', 'sp_directory_id'], asana: ['asana_api_token_secret'],
  teams: ['teams_client_id', 'teams_client_secret', 'teams_directory_id'],
  zendesk: ['zendesk_subdomain', 'zendesk_email', 'zendesk_token'], discourse: ['discourse_api_key', 'discourse_api_username'],
  axero: ['base_url', 'axero_api_token'], clickup: ['clickup_api_token', 'clickup_team_id'],
  s3: ['aws_access_key_id', 'aws_secret_access_key'], r2: ['account_id', 'r2_access_key_id', 'r2_secret_access_key'],
  google_cloud_storage: ['access_key_id', 'secret_access_key'],
  oci_storage: ['namespace', 'region', 'access_key_id', 'secret_access_key'],
  freshdesk: ['freshdesk_domain', 'freshdesk_api_key'], fireflies: ['fireflies_api_key'], egnyte: ['domain', 'access_token'],
  airtable: ['airtable_access_token'], drupal_wiki: ['drupal_wiki_api_token'], discord: ['discord_bot_token'],
  google_drive: ['google_service_account_key', 'google_primary_admin', 'authentication_method'], gmail: ['google_tokens'], gitbook: ['gitbook_api_key'],
  highspot: ['highspot_url', 'highspot_key', 'highspot_secret'], imap: ['imap_username', 'imap_password'],
  testrail: ['testrail_base_url', 'testrail_username', 'testrail_api_key'],
};

/** credentialKeysOf returns the keys of source's credential_json (none: it needs no secrets). */
export const credentialKeysOf = (source) => credentialKeys[source] ?? [];
