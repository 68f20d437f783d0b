// The 55 document sources (interface.md 2.7, in that order), with the
// names people know them by.

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

/** sourceOptions returns <option>s for every source, by name. */
export function sourceOptions(el) {
  return [...sources].sort((a, b) => a[1].localeCompare(b[1]))
    .map(([v, n]) => el('option', { value: v }, `${n} (${v})`));
}
